#!/usr/bin/env python3
"""Validates a JSON document against a JSON Schema (draft 2020-12): exit 0 when valid, 1 with
the first error when not, 2 when python3-jsonschema is missing."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(2)

schema = json.load(open(sys.argv[1]))
document = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document), key=lambda e: list(e.path))
for e in errors[:1]:
    print(f"{'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
sys.exit(1 if errors else 0)
