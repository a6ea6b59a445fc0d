"""A JSON Schema inferred from one JSON value: what the fields are, not what they hold.

Objects list their properties (all required); in an array of objects the properties merge and
only those in every element are required; an array of mixed values gets ``anyOf`` items.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def schema_of(value: Any) -> Schema:
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        return _array(value)
    if isinstance(value, dict):
        return _objects([value])
    return {}


def _objects(objects: list[dict[str, Any]]) -> Schema:
    values: dict[str, list[Any]] = {}
    for item in objects:
        for key, value in item.items():
            values.setdefault(key, []).append(value)
    schema: Schema = {
        "type": "object",
        "properties": {key: _merged(found) for key, found in values.items()},
    }
    required = [key for key, found in values.items() if len(found) == len(objects)]
    if required:
        schema["required"] = required
    return schema


def _merged(values: list[Any]) -> Schema:
    """One schema for several values of the same place."""
    if all(isinstance(value, dict) for value in values):
        return _objects(values)
    kinds: dict[str, Schema] = {}
    objects = [value for value in values if isinstance(value, dict)]
    arrays = [item for value in values if isinstance(value, list) for item in value]
    for value in values:
        if isinstance(value, dict):
            continue
        if isinstance(value, list):
            kinds["array"] = _array(arrays)
            continue
        schema = schema_of(value)
        kinds.setdefault(str(schema.get("type")), schema)
    if objects:
        kinds["object"] = _objects(objects)
    schemas = list(kinds.values())
    return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}


def _array(items: list[Any]) -> Schema:
    if not items:
        return {"type": "array"}
    return {"type": "array", "items": _merged(items)}
