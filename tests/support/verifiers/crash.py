"""A fake verifier that fails: message on stderr, exit status ``argv[1]``."""

import sys

sys.stdin.read()
print("error: model quota exceeded", file=sys.stderr)
sys.exit(int(sys.argv[1]))
