"""Like cite.py, but answers with the JSON alternative: ``cite_json.py FILE LINE QUOTE``."""

import json
import sys

from _common import questions, read_prompt

file, line, quote = sys.argv[1:4]
asked = questions(read_prompt())
print(
    json.dumps(
        {
            "status": "verified-with-corrections",
            "questions": asked,
            "answers": ["yes: see the discrepancy"] * len(asked),
            "discrepancies": [
                {"file": file, "line": int(line), "quote": quote, "reason": "checks nothing"}
            ],
            "final": "one discrepancy",
        }
    )
)
