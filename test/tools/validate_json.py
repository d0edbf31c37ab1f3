#!/usr/bin/env python3
# Validates JSON lines against a JSON Schema: validate_json.py SCHEMA FILE [valid|invalid].
# Every line of FILE must be valid (or, with "invalid", every line must be rejected).
# Prints one line per disagreement; exits 1 when there is any, 3 when jsonschema is missing.
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (scripts/install-deps.sh installs it)")
    sys.exit(3)

schema_path, data_path = sys.argv[1], sys.argv[2]
want_valid = len(sys.argv) < 4 or sys.argv[3] == "valid"
with open(schema_path) as f:
    schema = json.load(f)
validator_class = jsonschema.validators.validator_for(schema)
validator_class.check_schema(schema)
validator = validator_class(schema)

bad = 0
count = 0
with open(data_path) as f:
    for number, text in enumerate(f, 1):
        if not text.strip():
            continue
        count += 1
        errors = list(validator.iter_errors(json.loads(text)))
        if want_valid and errors:
            bad += 1
            best = jsonschema.exceptions.best_match(errors)
            print(f"line {number}: {best.message} at {list(best.absolute_path)}: {text.strip()[:300]}")
        elif not want_valid and not errors:
            bad += 1
            print(f"line {number}: accepted, but should not be: {text.strip()[:300]}")
print(f"{count} lines, {bad} wrong")
sys.exit(1 if bad or count == 0 else 0)
