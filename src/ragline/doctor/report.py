"""The doctor's report: a Markdown table, and a self-contained HTML page with one inline SVG plot per probe."""

from __future__ import annotations

import html
from typing import Any

COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759")


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# ragline doctor: {result['config']}",
        "",
        "| probe | figure | status | the fix that helps | reader (model) | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for p in result["probes"]:
        figure = p["figure"] + (f" (could not run: {p['reason']})" if p.get("reason") else "")
        lines.append(
            f"| {p['name']} | {figure} | {p['status']} | {p['fix']} | {p.get('model', '')} | {p['seconds']:.0f} |"
        )
    lines += [
        "",
        "Rules:",
        *[f"- {p['name']}: {p['rule']}" for p in result["probes"]],
        *[f"- {name}: not run on {result['store']}: {why}" for name, why in result.get("not_run", {}).items()],
        "",
        f"{result['seconds']:.0f} s; probe file {result['probe_file']}"
        + (f"; store {result['store']}" if result.get("store") else "")
        + ("; --quick: a smoke run on a few questions of each type" if result.get("quick") else ""),
    ]
    return "\n".join(lines) + "\n"


def svg_bars(plot: dict[str, Any], width: int = 360, height: int = 200) -> str:
    """Grouped bars (values 0..1) as an inline SVG element."""
    labels, series = plot["labels"], plot["series"]
    pad, top = 30, 24
    group = (width - pad) / max(1, len(labels))
    bar = group * 0.8 / max(1, len(series))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 40}" role="img">',
        f'<text x="4" y="14" font-size="12">{html.escape(plot["title"])}</text>',
        f'<line x1="{pad}" y1="{top + height - 20}" x2="{width}" y2="{top + height - 20}" stroke="#333"/>',
    ]
    scale = height - 40
    for j, (name, values) in enumerate(series.items()):
        for i, value in enumerate(values):
            v = 0.0 if value is None else float(value)
            x = pad + i * group + group * 0.1 + j * bar
            y = top + height - 20 - v * scale
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{v * scale:.1f}" '
                f'fill="{COLORS[j % len(COLORS)]}"><title>{html.escape(name)} {v:.2f}</title></rect>'
            )
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{y - 2:.1f}" font-size="9" text-anchor="middle">{v:.2f}</text>'
            )
    for i, label in enumerate(labels):
        x = pad + i * group + group / 2
        parts.append(
            f'<text x="{x:.1f}" y="{top + height - 6}" font-size="10" text-anchor="middle">{html.escape(label)}</text>'
        )
    for j, name in enumerate(series):
        parts.append(
            f'<rect x="{pad + j * 90}" y="{top + height + 4}" width="10" height="10" fill="{COLORS[j % len(COLORS)]}"/>'
            f'<text x="{pad + j * 90 + 14}" y="{top + height + 13}" font-size="10">{html.escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def html_page(result: dict[str, Any]) -> str:
    """One HTML file, no external resources: the table, then each probe's plot and rule."""
    e = html.escape
    rows = "".join(
        f'<tr class="{e(p["status"])}"><td>{e(p["name"])}</td><td>{e(p["figure"])}'
        f"{(' — could not run: ' + e(p['reason'])) if p.get('reason') else ''}</td>"
        f"<td>{e(p['status'])}</td><td>{e(p['fix'])}</td><td>{e(p.get('model', ''))}</td>"
        f"<td>{p['seconds']:.0f}</td></tr>"
        for p in result["probes"]
    )
    plots = "".join(
        f"<figure><figcaption><b>{e(p['name'])}</b> — {e(p['status'])}</figcaption>"
        f'{svg_bars(p["plot"]) if p.get("plot") else "<p>no plot</p>"}<p class="rule">{e(p["rule"])}</p></figure>'
        for p in result["probes"]
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ragline doctor: {e(result["config"])}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #bbb; padding: 4px 8px; text-align: left; font-size: 13px; }}
tr.pass td:nth-child(3) {{ background: #d8f0d2; }} tr.flag td:nth-child(3) {{ background: #f8d3d0; }}
.plots {{ display: flex; flex-wrap: wrap; gap: 12px; }} figure {{ margin: 0; width: 370px; }}
.rule {{ font-size: 11px; color: #444; }}
</style></head><body>
<h1>ragline doctor: {e(result["config"])}</h1>
<table id="probes"><thead><tr><th>probe</th><th>figure</th><th>status</th><th>the fix that helps</th>
<th>reader (model)</th><th>seconds</th></tr></thead>
<tbody>{rows}</tbody></table>
<p>{result["seconds"]:.0f} s; probe file {e(result["probe_file"])};
config fingerprint {e(result["config_fingerprint"])}</p>
<div class="plots">{plots}</div>
</body></html>
"""
