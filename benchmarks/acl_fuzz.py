"""The ACL fuzz's figures: pairs and leaks per arm, and whether the planted leak (filter after top k) was found.

PYTHONPATH=src python benchmarks/acl_fuzz.py [--scale 1] [--out benchmarks/results/acl_fuzz.json]

The arms are ``ragline.eval.acl_fuzz.ARMS``, the same ones ``tests/trust/test_acl_fuzz.py`` runs; ``--scale``
multiplies each arm's corpora (the README's headline is scale 1).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import log, print_result, timed, write_result
from ragline.eval.acl_fuzz import ARMS, MUTATION


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply each arm's corpora (default 1)")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    arms = []
    for arm in ARMS.values():
        (pairs, found), seconds = timed(lambda arm=arm: arm.run(args.scale))
        log(f"{arm.name}: {pairs} pairs, {len(found)} leaks, {seconds:.1f} s")
        arms.append({"arm": arm.name, "pairs": pairs, "leaks": len(found), "examples": found[:3],
                     "seconds": round(seconds, 1)})  # fmt: skip
    pairs, found = MUTATION.run()
    result = {
        "scale": args.scale,
        "arms": arms,
        "total": {"pairs": sum(a["pairs"] for a in arms), "leaks": sum(a["leaks"] for a in arms)},
        "mutation": {"arm": MUTATION.name, "pairs": pairs, "leaks": len(found), "found": bool(found)},
    }
    if args.out:
        write_result(args.out, result)
    print_result(result)


if __name__ == "__main__":
    main()
