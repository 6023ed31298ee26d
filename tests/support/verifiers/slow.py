"""A fake verifier that takes ``argv[1]`` seconds before it answers (for timeouts)."""

import sys
import time

from _common import read_prompt, reply

prompt = read_prompt()
time.sleep(float(sys.argv[1]))
print(reply(prompt, []))
