"""A fake verifier that ignores the protocol."""

import sys

sys.stdin.read()
print("The tests look fine to me. Nice work!")
