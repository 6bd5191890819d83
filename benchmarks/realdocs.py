"""The real-document QA set: documentation found offline on the machine, and hand-written questions.

Three collections, each document checked by the SHA-256 of its file (a changed version is reported, never
silently evaluated):

- ``pypi-metadata``: the ``*.dist-info/METADATA`` of 14 packages pinned in pyproject.toml (header fields, then
  the long description: license, authors, what it does);
- ``package-docs``: the Markdown documentation shipped inside the installed ``oletools`` and ``olefile``
  packages (``oletools/doc``, ``olefile/doc``: what each tool does, its options, how to install);
- ``debian-doc``: READMEs, FAQs and policy texts of Debian packages under ``/usr/share/doc`` (zstd, gzip,
  base-passwd, man-db, ed, chromium, gpg-agent, procps; for the held-out half also xz-utils, wget, grep, jq,
  coreutils, adduser, apt, base-files, openssh-client, zlib, valgrind, nodejs, systemd, python3-dev, fontconfig,
  libffi, libjpeg, ca-certificates, make; ``.gz`` files are read decompressed).

Questions (``benchmarks/realdocs/questions.jsonl``, written by hand from the text before anything was run on
them) have gold answers (aliases allowed), gold documents, a ``type`` (factoid, how-to, multi-sentence, list,
not answerable) and a ``collection``. Three halves: **dev**, the 57 METADATA questions that earlier work ran on
(its ``calibration`` and ``report`` halves), where settings are chosen; **test**, 135 questions over the other
two collections, reported once and then read to find two reader rules, so no longer held out; **heldout**, 110
questions over 23 further Debian documents, written from the text before anything was run on them (2026-12),
the half a new report is made on. Rules are chosen on dev and test together.

    .venv/bin/python benchmarks/realdocs.py --out benchmarks/data/realdocs             # all questions
    .venv/bin/python benchmarks/realdocs.py --out DIR --split test                      # the test half
    .venv/bin/python benchmarks/realdocs.py --out DIR --split heldout                   # the held-out half

The output is a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``, ``questions.jsonl``)
that ``ragline eval DIR --reader extractive`` reads; the corpus always holds every document of the
collections built (all three by default), so a question never sees only its own collection.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sysconfig
from pathlib import Path

from ragline.errors import InputError

QUESTIONS = Path(__file__).parent / "realdocs" / "questions.jsonl"
SPLITS = ("calibration", "report", "test", "heldout")  # a question's own split
HALVES = {"dev": ("calibration", "report"), "test": ("test",), "heldout": ("heldout",)}  # what --split may also name
COLLECTIONS = ("pypi-metadata", "package-docs", "debian-doc")
DEBIAN_DOC = Path("/usr/share/doc")

# document id -> (dist-info folder, SHA-256 of its METADATA); versions as pinned in pyproject.toml.
SOURCES: dict[str, tuple[str, str]] = {
    "httpx": ("httpx-0.28.1.dist-info", "febb9b0f8f3e80d57c8199c304f35c4336e8581d1d18d7983c92766b82793b25"),
    "pypdf": ("pypdf-7.1.1.dist-info", "ba172e01943c9bf5452fa33a2de42d90284f18f5505d8dc17567f8533079c345"),
    "numba": ("numba-0.68.1.dist-info", "03180342d0a32eeed6a7ae09124b5c73d4d3acd8208cfe3fd039f4f440088b0b"),
    "lxml": ("lxml-6.1.3.dist-info", "aad89f8107bc74045b86c9b7f7c0984196102520dd7faed5e4e45693b7c315ef"),
    "pyyaml": ("pyyaml-6.0.4.dist-info", "ad52ca347a4edcd0d4e10b51cd2e6e7107842313fa10c9206a70ce44ed65a760"),
    "jieba": ("jieba-0.42.1.dist-info", "5661d2cfc5b23f8c1b5ed4cecfa1ec866ddf563273c61e3911a362a3e6f3eea1"),
    "pytest": ("pytest-9.2.0.dist-info", "006823d1759e40b4546ff4296945eda3f0692e799f724bb235edd0512d42eead"),
    "pystemmer": ("pystemmer-3.1.0.dist-info", "60d89408e47c14b816b5cfbba4cede14081ce7ea65ec5aaeda4bc25c195bcbc6"),
    "rank-bm25": ("rank_bm25-0.2.2.dist-info", "1de65ad7ae030a81c3006d546f1939bf15dc1e3b45728c469a9c4097b08840e8"),
    "tantivy": ("tantivy-0.27.0.dist-info", "5cf3c0f62e80cb3c65c72cce473d94b3830356d3094f38ffc8b84a2e3399a108"),
    "numpy": ("numpy-2.4.6.dist-info", "b082c52ccbe3b880bae177c35171b52ed6c947f3ad71e3762f2723f60a411de0"),
    "faiss-cpu": ("faiss_cpu-1.15.1.dist-info", "ea9516cb19c2bcbcf915a2bdeb06006bcec125e0a1d22eb5d0724f0e1bfc903c"),
    "hypothesis": ("hypothesis-6.170.17.dist-info", "645b099ac6a691396a7edea134ee9086577c3dcbb58431f3a8a5fdb350267da4"),
    "rich": ("rich-15.0.0.dist-info", "fad34fc603fac4481bf81f8dd629492fc302c0ec31909c86644751512afb2e3b"),
}

# document id -> (collection, path under its root, SHA-256 of the file as stored): the two other collections.
# package-docs lie in site-packages (oletools 0.60.2, olefile 0.47); debian-doc under /usr/share/doc.
FILES: dict[str, tuple[str, str, str]] = {
    "oletools-Home": (
        "package-docs",
        "oletools/doc/Home.md",
        "8b5f8d9ba97926c8953075d6d1e31c667c6123588fb12050e476ca2c2d27c4a2",
    ),
    "oletools-mraptor": (
        "package-docs",
        "oletools/doc/mraptor.md",
        "006e66e06c05d0cae558e6f4ccd0d7d5cb4f735e6bbd0d846236538a55bd8d44",
    ),
    "oletools-oleid": (
        "package-docs",
        "oletools/doc/oleid.md",
        "e7555d75c1f474685dc5043b3c27675260a475f246f0b081170b61b7de8419cf",
    ),
    "oletools-msodde": (
        "package-docs",
        "oletools/doc/msodde.md",
        "462579a96d1b79905ffa599a4b0771b79e5edea6bd638e759a55d6b03bda864e",
    ),
    "oletools-rtfobj": (
        "package-docs",
        "oletools/doc/rtfobj.md",
        "cf1399a1de5e47367f6b7a507a231bb980fd013dee36c640056a7ceb5426bbca",
    ),
    "oletools-Install": (
        "package-docs",
        "oletools/doc/Install.md",
        "bf23ff48233a2d5aa66021d6894f19e9220b22bc63a603dc243e35e98d337385",
    ),
    "oletools-oletimes": (
        "package-docs",
        "oletools/doc/oletimes.md",
        "993135985cfc114b2bbb45d4d61ba1732c5ba39d87e45ab530f6182a16e1ba0b",
    ),
    "olefile-Home": (
        "package-docs",
        "olefile/doc/Home.md",
        "650ad7a3b0b2048ac7014b7ae3d10ebe06e0a95f45d90182eea468c63f650cc3",
    ),
    "olefile-OLE_Overview": (
        "package-docs",
        "olefile/doc/OLE_Overview.md",
        "a4e8b650964272644490ee6c514ba9b6c839e7a0801f7f4585668ee449a4cd67",
    ),
    "olefile-Install": (
        "package-docs",
        "olefile/doc/Install.md",
        "861ed1d5e21a5aeec956d01a9433d54012675294da882b658d5af4c8a0ae4a79",
    ),
    "debian-zstd": (
        "debian-doc",
        "zstd/README.md.gz",
        "83931b652049a3a6cfa9df297cb1027b35ef1137532433b9de56827e4ae2e9c5",
    ),
    "debian-gzip": (
        "debian-doc",
        "gzip/README.gz",
        "9dba945fc694fde81680f008c95ed256028d2b1074fb798882dd39acd990f5dd",
    ),
    "debian-base-passwd": (
        "debian-doc",
        "base-passwd/README",
        "a1578a2b544335e57829f05c877b6bdbfd109935d12f530535c36513c857f0c3",
    ),
    "debian-man-db": (
        "debian-doc",
        "man-db/README.md.gz",
        "0a2bcaf1274e20f340f6d8f5654808040238ade7badbbd7656a9e7a82e66dba6",
    ),
    "debian-ed": (
        "debian-doc",
        "ed/README.gz",
        "0994591402a27536d0f947e41158a60210803e839e373c5308a9a3fd69bd3502",
    ),
    "debian-chromium": (
        "debian-doc",
        "chromium/README.Debian",
        "a40d61bb88b21adc3f60d3811402b8038917ab7d8daecd1ce122b29f22692a23",
    ),
    "debian-gpg-agent": (
        "debian-doc",
        "gpg-agent/README.Debian",
        "ddbe8f73e936810bf4af9ca854e3c61e8fd429d80cbabca0d344bdf58b2971a4",
    ),
    "debian-procps": (
        "debian-doc",
        "procps/bugs.md",
        "01c2558f362cfc7b7ec12fafcaa9f3b874aae1340a7944a1b239a5d83a642af3",
    ),
    # the held-out half's documents (written 2026-12, after the test half had informed reader rules)
    "debian-xz-utils-faq": (
        "debian-doc",
        "xz-utils/faq.txt.gz",
        "7841bfd00957256774e3ac411d05aa98410aceb67eb082662ef0f80de1c88ad9",
    ),
    "debian-xz-utils-readme": (
        "debian-doc",
        "xz-utils/README.gz",
        "4147002a0283bb5efea76919f4aca0f36978a1ebe27bbd1faf92246f9e9cf8a5",
    ),
    "debian-wget-readme": (
        "debian-doc",
        "wget/README",
        "0607e6dbc6c5b626d89261b6ed718b6a4ad37a25fe8ff00baf5863713e205d11",
    ),
    "debian-grep-readme": (
        "debian-doc",
        "grep/README",
        "e4a7511a3fceea65ea501defe9f1eb8f7a52f0fa84b0e5db5524252c085964ac",
    ),
    "debian-jq-readme": ("debian-doc", "jq/README", "481d101b9eff86171829d34a765abb628ed8bb9b0642f93f43317a5c079ca36d"),
    "debian-coreutils-readme": (
        "debian-doc",
        "coreutils/README.gz",
        "d52dc14b768de06ff4382f9624371dc2b949b394568680422f8bf327e44435dd",
    ),
    "debian-adduser-readme": (
        "debian-doc",
        "adduser/README.gz",
        "1e34e3176204bf45ea97cc874ec1d2d801baef003188722a5f1373d7e738f4ef",
    ),
    "debian-apt-readme": (
        "debian-doc",
        "apt/README.md.gz",
        "4e4814a5488b9bbbe71e9783e28c700ce3b6a4d713e991e05d7ee4cd8e73e2e1",
    ),
    "debian-base-files-readme": (
        "debian-doc",
        "base-files/README",
        "ec7b7bf0ff681b5bb1f2eb3d2c1714face8fb61eda2e12d440ec81570124ad95",
    ),
    "debian-openssh-client-readme-debian": (
        "debian-doc",
        "openssh-client/README.Debian.gz",
        "d01921e4de3c44b0bc00359800f18287371975610df02cc8f07acb24dc959be6",
    ),
    "debian-zlib-faq": (
        "debian-doc",
        "zlib1g-dev/FAQ.gz",
        "4b5123e906f14feab6bb87899057cc3ac8af39aab070bee5110524572ed85516",
    ),
    "debian-valgrind-faq": (
        "debian-doc",
        "valgrind/FAQ.txt.gz",
        "1121944bbccb2386d99189288ebe4829a19e45406e3643269b82753a2b3d5e6c",
    ),
    "debian-nodejs-security": (
        "debian-doc",
        "nodejs/SECURITY.md",
        "0e083015e7fe9ede5eee49e50d9f71c504c390ed7dc7fe2bd76c49a338c21942",
    ),
    "debian-nodejs-governance": (
        "debian-doc",
        "nodejs/GOVERNANCE.md",
        "cbb95a1eaa5658b1d8e835f01612fd3ab1f42e175606a9dcde6a1e244518335e",
    ),
    "debian-systemd-uids-gids": (
        "debian-doc",
        "systemd/UIDS-GIDS.md.gz",
        "686e735116bc50e0997a8825437b643b552c05537da317236c3f05e75fe2c4de",
    ),
    "debian-systemd-environment": (
        "debian-doc",
        "systemd/ENVIRONMENT.md.gz",
        "f4cf1771a1cbd74bc442e21ba72ed0822e72adeb80eefba5d75321957c3c0457",
    ),
    "debian-python-policy": (
        "debian-doc",
        "python3-dev/python-policy.txt.gz",
        "45942d2b05cd14bd1551d460906470be22d332cce292af6a8c205ebeb58e554d",
    ),
    "debian-fontconfig-user": (
        "debian-doc",
        "fontconfig/fontconfig-user.txt.gz",
        "a603673ccf707c224cf811c441ddcf6b6c76d82c45f6c442d49f7d582da1db8e",
    ),
    "debian-libffi-readme": (
        "debian-doc",
        "libffi-dev/README.md.gz",
        "6229d48f20b9a21e601b5524fa7410b33fc2341b6932d04cf95fea00db008465",
    ),
    "debian-libjpeg-readme": (
        "debian-doc",
        "libjpeg-dev/README.md.gz",
        "84aa81762a1a8455fcecf869b57c592f72d4f6bd6bead54ffa43962d55740e84",
    ),
    "debian-man-db-faq": (
        "debian-doc",
        "man-db/FAQ",
        "04af86878a6105c26667680bc6f621fe9eba9162bb5e4c8f8c456275274ca96d",
    ),
    "debian-ca-certificates-readme-debian": (
        "debian-doc",
        "ca-certificates/README.Debian",
        "c60e0d1636995a15249a32b12b7e61d286612deb6600ae9de42f98e9bbcf8f83",
    ),
    "debian-make-readme": (
        "debian-doc",
        "make/README.gz",
        "fb3f888e858f288c6c7b8c6e1ff62b07180c002b7adcc9ede814fae25009b84a",
    ),
}


def site_packages() -> Path:
    """The running interpreter's site-packages (the venv's, when run with its python)."""
    return Path(sysconfig.get_paths()["purelib"])


def _checked(path: Path, digest: str, missing: str) -> bytes:
    """The bytes of ``path`` after checking their SHA-256 against ``digest``; InputError naming it otherwise."""
    if not path.is_file():
        raise InputError(str(path), f"missing: {missing}")
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        raise InputError(
            str(path),
            f"SHA-256 {actual} differs from the recorded {digest}: the installed version is not the one the "
            "questions were written on; reinstall it, or update the recorded hash and re-check the answers",
        )
    return data


def read_source(doc_id: str, root: Path) -> str:
    """The METADATA text of ``doc_id``, after checking its SHA-256 against ``SOURCES``."""
    folder, digest = SOURCES[doc_id]
    missing = f"install the pinned {folder.removesuffix('.dist-info')} (make setup)"
    return _checked(root / folder / "METADATA", digest, missing).decode("utf-8")


def read_file(doc_id: str, root: Path, debian: Path) -> str:
    """The text of a ``FILES`` document (decompressed when ``.gz``), after checking its SHA-256."""
    collection, relative, digest = FILES[doc_id]
    base = debian if collection == "debian-doc" else root
    missing = "the Debian package's documentation is not installed" if collection == "debian-doc" else (
        "install the package that ships it (make setup)")  # fmt: skip
    data = _checked(base / relative, digest, missing)
    return (gzip.decompress(data) if relative.endswith(".gz") else data).decode("utf-8")


def documents(
    root: Path, collections: tuple[str, ...] = COLLECTIONS, debian: Path = DEBIAN_DOC
) -> list[dict[str, str]]:
    """BEIR corpus records (id, title, text, collection) of ``collections``."""
    records = []
    if "pypi-metadata" in collections:
        for doc_id in SOURCES:
            text = read_source(doc_id, root)
            header = dict(line.split(": ", 1) for line in text.split("\n\n", 1)[0].splitlines() if ": " in line)
            title = f"{header.get('Name', doc_id)} {header.get('Version', '')}".strip()
            records.append({"_id": doc_id, "title": title, "text": text, "collection": "pypi-metadata"})
    for doc_id, (collection, relative, _) in FILES.items():
        if collection in collections:
            package = relative.split("/")[0]
            name = Path(relative).name.removesuffix(".gz")
            title = f"{package} {name}" if collection == "debian-doc" else f"{package} documentation: {Path(name).stem}"
            text = read_file(doc_id, root, debian)
            records.append({"_id": doc_id, "title": title, "text": text, "collection": collection})
    return records


def load_questions(split: str | None = None, path: Path = QUESTIONS) -> list[dict]:
    """The hand-written questions: all, a half (``dev`` / ``test``) or a question split (``calibration``...)."""
    known = (*HALVES, *SPLITS)
    if split is not None and split not in known:
        raise InputError(str(path), f"unknown split {split!r}; choose one of {', '.join(known)}")
    wanted = HALVES.get(split or "", (split,))
    questions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [q for q in questions if split is None or q["split"] in wanted]


def build(
    out: Path,
    split: str | None = None,
    root: Path | None = None,
    collections: tuple[str, ...] = COLLECTIONS,
    debian: Path = DEBIAN_DOC,
) -> Path:
    """Write the BEIR folder of ``split`` (None: every question) over ``collections`` to ``out``.

    The corpus is every document of ``collections``; only questions about those collections are kept.
    """
    corpus = documents(root or site_packages(), collections, debian)
    ids = {d["_id"] for d in corpus}
    questions = [q for q in load_questions(split) if q.get("collection", "pypi-metadata") in collections]
    for q in questions:
        unknown = [d for d in q.get("supporting_ids", []) if d not in ids]
        if unknown:
            raise InputError(str(QUESTIONS), f"question {q['id']}: supporting ids {unknown} name no document")
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    _write_jsonl(out / "corpus.jsonl", corpus)
    _write_jsonl(out / "questions.jsonl", questions)
    _write_jsonl(out / "queries.jsonl", [{"_id": q["id"], "text": q["question"]} for q in questions])
    rows = [f"{q['id']}\t{d}\t1\n" for q in questions for d in q.get("supporting_ids", [])]
    (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(rows), encoding="utf-8")
    return out


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write (BEIR layout)")
    parser.add_argument("--split", choices=(*HALVES, *SPLITS), help="only these questions (default: all)")
    parser.add_argument("--collections", default=",".join(COLLECTIONS), help="comma-separated (default: all three)")
    parser.add_argument("--site-packages", type=Path, help="where the dist-info folders are (default: this venv)")
    parser.add_argument("--debian-doc", type=Path, default=DEBIAN_DOC, help="Debian's doc folder (/usr/share/doc)")
    args = parser.parse_args()
    collections = tuple(c.strip() for c in args.collections.split(",") if c.strip())
    unknown = [c for c in collections if c not in COLLECTIONS]
    if unknown:
        parser.error(f"unknown collections {unknown}; choose among {', '.join(COLLECTIONS)}")
    out = build(args.out, args.split, args.site_packages, collections, args.debian_doc)
    counts = {
        name: len((out / name).read_text(encoding="utf-8").splitlines()) for name in ("corpus.jsonl", "questions.jsonl")
    }
    print(json.dumps({"out": str(out), "documents": counts["corpus.jsonl"], "questions": counts["questions.jsonl"]}))


if __name__ == "__main__":
    main()
