"""A fake verifier that finds nothing."""

from _common import read_prompt, reply

print(reply(read_prompt(), []))
