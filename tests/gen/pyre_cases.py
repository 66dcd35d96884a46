#!/usr/bin/env python3
"""Write tests/fixtures/rules/pyre.tsv: regular expressions and whether
Python's re.compile() accepts them (1) or not (0), for core/rules/pyre.c
(lora.target_modules_regex).  Run with the Python the oracle uses (3.11):
python3 tests/gen/pyre_cases.py > tests/fixtures/rules/pyre.tsv
"""
import re
import sys

CASES = [
    # plain module names and the common patterns
    "q_proj", "model.layers.0.self_attn.q_proj", ".*_proj", r".*\.q_proj$",
    r"^model\.layers\.\d+\.mlp\.(gate|up|down)_proj$", "(q|k|v|o)_proj",
    "[qkvo]_proj", "layers.[0-9]+", "a|b|", "", "x{2}", "x{2,}", "x{,3}",
    "x{2,3}?", "x*?", "x+?", "x??", "x*+", "x++", "x?+", "x{2,3}+",
    "{", "x{", "x{a}", "x{,}", "x{2,1}", "[a-z]", "[z-a]", "[]a]", "[^]a]",
    "[a-]", "[-a]", r"[\d-z]", r"[a-\d]", r"[\w]", r"[\]]", "[", "[a",
    r"[\b]", r"[\A]", r"[\z]", r"\A", r"\Z", r"\b", r"\B", r"\z", r"\e",
    r"\d\D\s\S\w\W", r"\x41", r"\x4", r"\u0041", r"\u004", r"\U00000041",
    r"\U0011ffff", r"\N{LATIN SMALL LETTER A}", r"\N", r"\0", r"\012",
    r"\777", r"\400", r"\1", "(a)\\1", "(a)\\2", "(a\\1)", r"\8", r"\9",
    "\\", "a\\", r"\.", r"\-", r"\ ", r"\/", "*", "+", "?", "a**", "a*+*",
    "(*)", "(|*)", "^*", "$*", r"\b*", "a|*", "()", "(", ")", "(a", "a)",
    "((a)", "(a))", "(?:a)", "(?:a", "(?P<n>a)", "(?P<n>a)(?P=n)",
    "(?P<n>a)(?P<n>b)", "(?P<1n>a)", "(?P<>a)", "(?P=n)", "(?P<n>a(?P=n))",
    "(?Px)", "(?#comment)", "(?#unterminated", "(?=a)", "(?!a)", "(?<=a)",
    "(?<!a)", "(?<a)", "(?=a)*", "(?>a)", "(?i)a", "a(?i)", "(?i:a)",
    "(?-i:a)", "(?i-s:a)", "(?-:a)", "(?L)a", "(?a)a", "(?u)a", "(?-a:b)",
    "(?x)a", "(?z)a", "(?", "(?i", "(?P<n>a)(?(n)b|c)", "(a)(?(1)b|c)",
    "(a)(?(1)b|c|d)", "(?(0)a)", "(?(2)a)", "(a)(?(x)b)", "|(?i)a",
    "(?i)(?s)a", "a{4294967295}", "a{4294967294}", "ä+", "[ä-ö]", "[ö-ä]",
    "a{1,2}{3}", "(?:a{1,2}){3}", "a|b|c)", "\\d+\\.\\d+",
]


def main() -> None:
    print("# pattern (Python string escapes) -> 1 when Python "
          f"{sys.version.split()[0]} re.compile() accepts it, else 0")
    for c in CASES:
        try:
            re.compile(c)
            ok = 1
        except re.error:
            ok = 0
        except Exception:  # noqa: BLE001 - anything else is a refusal too
            ok = 0
        print(f"{c.encode('unicode_escape').decode('ascii')}\t{ok}")


if __name__ == "__main__":
    main()
