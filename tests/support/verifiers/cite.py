"""A fake verifier raising one finding: ``cite.py FILE LINE QUOTE [REASON]``."""

import sys

from _common import read_prompt, reply

file, line, quote = sys.argv[1:4]
reason = sys.argv[4] if len(sys.argv) > 4 else "the test name claims more than it checks"
print(reply(read_prompt(), [f"{file}:{line} `{quote}` {reason}"]))
