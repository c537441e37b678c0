"""The API's reference page, /api/docs/: the OpenAPI schema (/api/schema/) read into tables, on
a page of the site's own layout (no Swagger UI: its page failed WCAG 2 AA, and this one is
plain HTML under the site's CSP). Built once a process: the schema changes only with the code."""

from functools import cache

from django.shortcuts import render
from drf_spectacular.generators import SchemaGenerator

METHODS = ("get", "post", "put", "patch", "delete")


def _type(schema: dict) -> str:
    """A schema in a few words: `integer`, `array of ProofOutput`, `one of: a, b`."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    if "allOf" in schema or "oneOf" in schema:
        parts = schema.get("allOf") or schema.get("oneOf")
        return " or ".join(_type(part) for part in parts)
    if "enum" in schema:
        return "one of: " + ", ".join(str(v) for v in schema["enum"] if v not in ("", None))
    if schema.get("type") == "array":
        return "array of " + _type(schema.get("items", {}))
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    return f"{kind} ({schema['format']})" if "format" in schema else kind


def _body(content: dict) -> str:
    return ", ".join(
        f"{media}: {_type(spec.get('schema', {}))}" for media, spec in (content or {}).items()
    )


@cache
def api_reference() -> dict:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    groups: dict[str, list] = {}
    for path, operations in schema["paths"].items():
        for method in METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            groups.setdefault((operation.get("tags") or ["api"])[0], []).append(
                {
                    "anchor": operation["operationId"],
                    "method": method.upper(),
                    "path": path,
                    "description": operation.get("description", ""),
                    "parameters": [
                        {
                            "name": p["name"],
                            "where": p["in"],
                            "required": p.get("required", False),
                            "type": _type(p.get("schema", {})),
                            "description": p.get("description", ""),
                        }
                        for p in operation.get("parameters", [])
                    ],
                    "body": _body(operation.get("requestBody", {}).get("content")),
                    "responses": [
                        {
                            "code": code,
                            "description": answer.get("description", ""),
                            "body": _body(answer.get("content")),
                        }
                        for code, answer in operation["responses"].items()
                    ],
                }
            )
    components = [
        {
            "name": name,
            "description": spec.get("description", ""),
            "type": _type(spec) if "properties" not in spec else "object",
            "fields": [
                {
                    "name": field,
                    "type": _type(definition),
                    "required": field in spec.get("required", []),
                    "read_only": definition.get("readOnly", False),
                    "description": definition.get("description", ""),
                }
                for field, definition in spec.get("properties", {}).items()
            ],
        }
        for name, spec in sorted(schema["components"]["schemas"].items())
    ]
    return {
        "info": schema["info"],
        "groups": sorted(groups.items()),
        "components": components,
    }


def api_docs(request):
    return render(request, "api_docs.html", api_reference())
