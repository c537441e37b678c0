"""The API schema's shared parts: every operation documents the errors it may answer."""

ERROR_SCHEMA = {
    "type": "object",
    "description": "`detail` says why; a refused body names each bad field with its messages.",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}
ERRORS = {
    "400": "The input is invalid: each bad field with its messages.",
    "401": "No credentials, or wrong ones.",
    "403": "Your role does not allow this operation.",
    "404": "No such object (or not one you may see).",
    "405": "This method is not allowed here.",
    "409": "The object is not in a state that allows this.",
    "413": "The body is over the size limit.",
    "415": "This media type is not accepted.",
    "429": "Too many requests: wait as `Retry-After` says.",
    "503": "A service the operation needs (database, job queue) is away: retry after `Retry-After`.",
}


def document_errors(result, generator, request, public):
    """drf-spectacular postprocessing hook: adds the `Error` component and, to each
    operation, the error answers it does not document itself."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"$ref": "#/components/schemas/Error"}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, description in ERRORS.items():
                responses.setdefault(
                    code,
                    {"description": description, "content": {"application/json": {"schema": ref}}},
                )
    return result
