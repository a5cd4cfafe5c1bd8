#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""validate_json.py SCHEMA INSTANCE: validates INSTANCE against the JSON Schema SCHEMA (any
draft the schema declares; Debian's python3-jsonschema). Exit 0 valid, 1 invalid, 77 when
jsonschema is not installed (CTest SKIP_RETURN_CODE)."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)


def main() -> int:
    schema_path, instance_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(instance_path, encoding="utf-8") as f:
        instance = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = sorted(validator_class(schema).iter_errors(instance), key=lambda e: list(e.path))
    for error in errors:
        path = "/" + "/".join(str(p) for p in error.absolute_path)
        print(f"{instance_path}: {path}: {error.message}")
    if errors:
        return 1
    print(f"{instance_path}: valid against {schema.get('title', schema_path)} "
          f"({validator_class.__name__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
