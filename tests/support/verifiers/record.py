"""A fake verifier that writes the prompt it got to the file named by argv[1], then finds nothing.

Its file existing proves that it ran.
"""

import sys

from _common import read_prompt, reply

prompt = read_prompt()
with open(sys.argv[1], "w", encoding="utf-8") as out:
    out.write(prompt)
print(reply(prompt, []))
