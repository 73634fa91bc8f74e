"""``python -m rules.tiers.swe_multi [DATASET]``: how the instances of a SWE-bench Multilingual file divide here:
per language, the candidates (a runner of this tier, a toolchain in its table) and the rejected with the reason
naming what is missing (``rules.tiers.swe_multi.languages``). Reads the dataset only; builds and proves nothing."""
from __future__ import annotations

import sys
from pathlib import Path

from rules.tiers.swe import swebench
from rules.tiers.swe_multi import RUNNERS, languages

DEFAULT = "/work/shared/data/swe-bench-multilingual.jsonl"


def main(argv: list[str]) -> int:
    data = swebench.load_dataset(Path(argv[0] if argv else DEFAULT))
    acc = languages.accounting(data.values(), RUNNERS)
    print(f"{acc['total']} instances: {len(acc['candidates'])} candidates, {len(acc['rejected'])} rejected")
    print(f"{'language':24} {'instances':>9} {'candidates':>10}")
    for lang, row in sorted(acc["by_language"].items()):
        print(f"{languages.NAMES.get(lang, lang):24} {row['total']:9} {row['candidates']:10}")
    print("rejected, by reason:")
    for why, n in sorted(acc["reasons"].items(), key=lambda x: -x[1]):
        print(f"  {n:4}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
