"""Building servers from documents: schema translation, names, route rules and the hook, and
hostile documents (each a clear error at build time, or the operation skipped with a warning:
at build for what the outline shows, at the first tools/list for a schema that cannot be
translated). Laziness itself is proven in tests/openapi/test_openapi_lazy.py."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import warnings

import httpx
import pytest
from jsonschema import Draft202012Validator

from rondo.client import Client
from rondo.openapi import OpenAPIError, OperationSkipped, Route, from_openapi

CLIENT = httpx.AsyncClient(base_url="https://api.example")
OK = {"200": {"description": "ok"}}


def doc(paths, schemas=None, version="3.0.3", **extra):
    out = {"openapi": version, "info": {"title": "T", "version": "1"}, "paths": paths, **extra}
    if schemas is not None:
        out["components"] = {"schemas": schemas}
    return out


async def listed(server):
    async with Client(server) as mcp:
        return await mcp.list_tools()


def build(document, **options):
    """The server, once a client has listed its tools (the first tools/list translates the
    schemas), and the skip warnings of build and listing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        server = from_openapi(document, CLIENT, **options)
        if server.tools:  # a server without tools has no tools/list
            asyncio.run(listed(server))
    for tool in server.tools.values():  # every schema handed out is valid 2020-12
        Draft202012Validator.check_schema(tool.wire["inputSchema"])
        if "outputSchema" in tool.wire:
            Draft202012Validator.check_schema(tool.wire["outputSchema"])
    return server, [str(w.message) for w in caught if w.category is OperationSkipped]


def op(operation_id=None, **rest):
    out = {"responses": OK, **rest}
    if operation_id:
        out["operationId"] = operation_id
    return out


def test_openapi_30_keywords_become_2020_12():
    schemas = {"Pet": {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string", "nullable": True, "example": "Rex"},
        "kind": {"type": "string", "enum": ["cat", "dog"], "nullable": True, "default": "cat"},
        "age": {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
        "owner": {"nullable": True, "allOf": [{"$ref": "#/components/schemas/Owner"}]},
        "x-internal": {"type": "string"}}, "discriminator": {"propertyName": "kind"},
        "x-vendor": 1},
        "Owner": {"oneOf": [{"type": "string"}, {"$ref": "#/components/schemas/Pet"}]}}
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
            "required": True}
    server, skipped = build(doc({"/pets": {"post": op("addPet", requestBody=body)}}, schemas))
    assert skipped == []
    schema = server.tools["addPet"].wire["inputSchema"]
    assert schema["required"] == ["name"]
    assert schema["properties"] == {
        "name": {"type": ["string", "null"], "examples": ["Rex"]},
        "kind": {"type": ["string", "null"], "enum": ["cat", "dog", None], "default": "cat"},
        "age": {"type": "integer", "exclusiveMinimum": 0},
        "owner": {"anyOf": [{"allOf": [{"$ref": "#/$defs/Owner"}]}, {"type": "null"}]},
        "x-internal": {"type": "string"},  # a property named x-..., not an extension
    }
    # Owner refers back to Pet: the cycle stays a reference, both are defined once.
    assert set(schema["$defs"]) == {"Owner", "Pet"}
    assert schema["$defs"]["Owner"] == {"oneOf": [{"type": "string"}, {"$ref": "#/$defs/Pet"}]}
    assert "discriminator" not in schema["$defs"]["Pet"] and "x-vendor" not in schema["$defs"]["Pet"]


def test_31_keeps_ref_siblings_and_types():
    schemas = {"Id": {"type": ["integer", "null"]}}
    params = [{"name": "id", "in": "query", "schema": {
        "$ref": "#/components/schemas/Id", "description": "the id"}}]
    server, _ = build(doc({"/x": {"get": op("getX", parameters=params)}}, schemas, "3.1.0"))
    prop = server.tools["getX"].wire["inputSchema"]["properties"]["id"]
    assert prop == {"description": "the id", "$ref": "#/$defs/Id"}


def test_self_referencing_output_schema_is_inlined_at_the_root():
    schemas = {"Node": {"type": "object", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}}
    responses = {"200": {"description": "ok", "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/Node"}}}}}
    server, _ = build(doc({"/tree": {"get": {"operationId": "tree", "responses": responses}}},
                          schemas))
    out = server.tools["tree"].wire["outputSchema"]
    assert out["type"] == "object"
    assert out["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert set(out["$defs"]) == {"Node"}


def test_names_are_cleaned_and_collisions_settled_in_document_order():
    paths = {
        "/repos/{owner}/statuses": {"post": op("repos/create-commit-status", parameters=[
            {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}}])},
        "/users/{id}": {"get": op(parameters=[
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}])},
        "/a": {"get": op("same name!")},
        "/b": {"get": op("same_name")},
        "/c": {"get": op("same name?")},
    }
    server, _ = build(doc(paths))
    assert list(server.tools) == ["repos_create-commit-status", "get_users_id", "same_name",
                                  "same_name_2", "same_name_3"]
    assert server.tools["same_name_2"].wire["description"] == "GET /b"


def test_a_name_in_two_locations_gets_distinct_arguments():
    params = [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}},
              {"name": "id", "in": "query", "schema": {"type": "string"}},
              {"name": "id", "in": "header", "schema": {"type": "string"}}]
    body = {"content": {"application/json": {"schema": {"type": "object", "properties": {
        "id": {"type": "string"}, "note": {"type": "string"}}}}}}
    server, _ = build(doc({"/x/{id}": {"put": op("putX", parameters=params, requestBody=body)}}))
    schema = server.tools["putX"].wire["inputSchema"]
    assert list(schema["properties"]) == ["id", "id_query", "id_header", "id_body", "note"]
    assert schema["required"] == ["id"]


def test_routes_choose_kinds_and_the_hook_renames_and_hides():
    paths = {
        "/status": {"get": op("status", tags=["meta"])},
        "/items/{id}": {"get": op("getItem", parameters=[
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]),
            "delete": op("deleteItem", tags=["admin"], parameters=[
                {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}])},
        "/internal/x": {"get": op("internal")},
        "/search": {"get": op("search", summary="Find things")},
    }
    routes = [Route(kind="exclude", tags=["admin"]), Route(kind="exclude", pattern="^/internal/"),
              Route(kind="resource", pattern="^/status$"),
              Route(kind="template", methods=["GET"], pattern=r"\{")]

    def customize(operation):
        if operation.operation_id == "search":
            operation.name = "find"
            operation.description = "Find anything."
        return operation

    server, _ = build(doc(paths), routes=routes, customize=customize, name="shop")
    assert list(server.tools) == ["find"]
    assert server.tools["find"].wire["description"] == "Find anything."
    assert list(server.resources) == ["openapi://shop/status"]
    assert list(server.templates) == ["openapi://shop/items/{id}"]
    hidden, _ = build(doc(paths), customize=lambda o: None if o.method == "GET" else o)
    assert list(hidden.tools) == ["deleteItem"]


def test_unsafe_methods_confirm_by_default_and_annotations_follow_the_method():
    paths = {"/x": {m: op(f"{m}X") for m in ("get", "put", "post", "delete", "patch")}}
    seen = {}
    build(doc(paths), customize=lambda o: seen.__setitem__(o.name, o.confirm) or o)
    assert seen == {"getX": False, "putX": True, "postX": True, "deleteX": True, "patchX": True}
    server, _ = build(doc(paths))
    assert server.tools["deleteX"].wire["annotations"]["destructiveHint"] is True
    assert server.tools["getX"].wire["annotations"]["readOnlyHint"] is True


# -- hostile documents -------------------------------------------------------------------------


@pytest.mark.parametrize("bad, message", [
    ([1, 2], r"a dict, a path or an http\(s\) URL, not list"),
    ({"swagger": "2.0", "paths": {}}, "Swagger 2.0 documents are not supported"),
    ({"openapi": "4.0.0", "paths": {}}, "unsupported OpenAPI version '4.0.0'"),
    ({"openapi": "3.0.0", "paths": []}, "'paths' must be an object"),
])
def test_documents_that_are_not_openapi_3_are_refused(bad, message):
    with pytest.raises(OpenAPIError, match=message):
        from_openapi(bad, CLIENT)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://api.example/", "/relative",
                                 "javascript:alert(1)"])
def test_server_urls_that_are_not_http_are_refused(url):
    with pytest.raises(OpenAPIError, match="must be an absolute http"):
        from_openapi(doc({}, servers=[{"url": url}]), httpx.AsyncClient())
    with pytest.raises(OpenAPIError, match="must be an absolute http"):
        from_openapi(doc({}), CLIENT, base_url=url)


def test_dangling_external_and_cyclic_refs_skip_their_operation_with_a_warning():
    schemas = {"Loop": {"$ref": "#/components/schemas/Loop2"},
               "Loop2": {"$ref": "#/components/schemas/Loop"}}
    paths = {
        "/dangling": {"get": op("dangling", parameters=[
            {"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/Nope"}}])},
        "/external": {"get": op("external", parameters=[
            {"$ref": "https://evil.example/params.json#/q"}])},
        "/cyclic": {"get": op("cyclic", parameters=[{"$ref": "#/components/parameters/A"}])},
        "/where": {"get": op("where", parameters=[
            {"name": "q", "in": "body", "schema": {}}])},
        "/style": {"get": op("style", parameters=[
            {"name": "q", "in": "query", "style": "matrix", "schema": {}}])},
        "/fine": {"get": op("fine", parameters=[
            {"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/Loop"}}])},
        "/media": {"post": op("media", requestBody={"content": {"image/png": {}}})},
    }
    document = doc(paths, schemas)
    document["components"]["parameters"] = {"A": {"$ref": "#/components/parameters/B"},
                                            "B": {"$ref": "#/components/parameters/A"}}
    outline = [  # found at build: parameters, bodies and references to them
        "GET /external skipped: external $ref 'https://evil.example/params.json#/q' "
        "(only references inside the document)",
        "GET /cyclic skipped: cyclic $ref '#/components/parameters/A'",
        "GET /where skipped: parameter 'q' in 'body'",
        "GET /style skipped: query parameter 'q' with style 'matrix'",
        "POST /media skipped: request body types image/png",
    ]
    in_schema = "GET /dangling skipped: dangling $ref '#/components/schemas/Nope'"
    with pytest.warns(OperationSkipped) as at_build:
        lazy = from_openapi(document, CLIENT)
    assert [str(w.message) for w in at_build] == outline
    assert list(lazy.tools) == ["dangling", "fine"]  # its schema is not read yet
    server, skipped = build(document)
    assert skipped == [*outline, in_schema]  # the first tools/list finds the dangling $ref
    # A schema cycle of pure references is a schema that refers to itself: served.
    assert list(server.tools) == ["fine"]
    eager, skipped = build(document, lazy=False)  # lazy=False: everything found at build
    assert skipped == [in_schema, *outline] and list(eager.tools) == ["fine"]


def test_path_variables_without_parameters_are_skipped():
    _, skipped = build(doc({"/x/{id}": {"get": op("x")}}))
    assert skipped == ["GET /x/{id} skipped: path variable {id} has no parameter"]


def test_files_too_large_or_not_json_are_refused(tmp_path):
    big = tmp_path / "big.json"
    big.write_text(json.dumps(doc({})) + " " * 100)
    with pytest.raises(OpenAPIError, match="larger than 50 bytes"):
        from_openapi(big, CLIENT, max_document_bytes=50)
    assert from_openapi(big, CLIENT).tools == {}
    yaml = tmp_path / "api.yaml"
    yaml.write_text("openapi: 3.0.0\n")
    with pytest.raises(OpenAPIError, match="YAML documents must be converted to JSON"):
        from_openapi(yaml, CLIENT)
    with pytest.raises(OpenAPIError, match="cannot read"):
        from_openapi(tmp_path / "missing.json", CLIENT)


class _DocServer:
    """A loopback HTTP server answering every GET with `answer(path)` -> (status, headers, body)."""

    def __init__(self, answer):
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the stdlib's name
                hits.append(self.path)
                status, headers, body = answer(self.path)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_document_url_is_fetched_once_within_bounds():
    body = json.dumps(doc({"/x": {"get": op("x")}})).encode()

    def answer(path):
        if path == "/moved":
            return 302, {"Location": "http://169.254.169.254/doc.json"}, b""
        return 200, {"Content-Type": "application/json"}, body

    served = _DocServer(answer)
    try:
        server = from_openapi(served.url + "/openapi.json", CLIENT)
        assert list(server.tools) == ["x"] and served.hits == ["/openapi.json"]
        with pytest.raises(OpenAPIError, match="HTTP 302 .redirect to 'http://169.254.169.254/"):
            from_openapi(served.url + "/moved", CLIENT)
        with pytest.raises(OpenAPIError, match="document larger than 20 bytes"):
            from_openapi(served.url + "/openapi.json", CLIENT, max_document_bytes=20)
    finally:
        served.close()


def test_bad_options_fail_at_build_time():
    with pytest.raises(ValueError, match="unconfirmed must be one of"):
        from_openapi(doc({}), CLIENT, unconfirmed="maybe")
    with pytest.raises(TypeError, match="client must be an httpx.AsyncClient"):
        from_openapi(doc({}), httpx.Client())
    with pytest.raises(ValueError, match="Route kind must be one of"):
        Route(kind="prompt")
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        from_openapi(doc({}), CLIENT, timeout=0)


# -- property: any 3.0 schema made of the keywords below translates to valid 2020-12 -----------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_leaf = st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "number",
                                                        "boolean"])},
                              optional={"nullable": st.booleans(), "example": st.integers(),
                                        "enum": st.lists(st.integers(), min_size=1, max_size=3),
                                        "minimum": st.integers(), "exclusiveMinimum": st.booleans(),
                                        "x-extra": st.integers(), "description": st.text(max_size=5),
                                        "default": st.integers()})
_ref = st.sampled_from([{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}])
_schemas = st.recursive(_leaf | _ref, lambda inner: st.one_of(
    st.fixed_dictionaries({"type": st.just("array"), "items": inner},
                          optional={"nullable": st.booleans()}),
    st.fixed_dictionaries({"type": st.just("object"),
                           "properties": st.dictionaries(st.text("abc", min_size=1, max_size=3),
                                                         inner, max_size=3)},
                          optional={"nullable": st.booleans(), "discriminator": st.just({}),
                                    "additionalProperties": inner | st.booleans()}),
    st.tuples(st.sampled_from(["allOf", "oneOf", "anyOf"]),
              st.lists(inner, min_size=1, max_size=3), st.booleans()).map(
        lambda t: {t[0]: t[1], **({"nullable": True} if t[2] else {})}),
), max_leaves=8)


@settings(max_examples=60, deadline=None)
@given(_schemas, _schemas)
def test_any_openapi_30_schema_translates_to_valid_2020_12(schema, a_schema):
    from rondo.openapi.schemas import Translator

    document = doc({}, {"A": a_schema, "B": {"type": "object", "properties": {
        "next": {"$ref": "#/components/schemas/A"}}}})
    out = Translator(document).schema(schema)
    Draft202012Validator.check_schema(out)
    text = json.dumps(out)
    for gone in ('"nullable"', '"discriminator"', '"x-extra"', '"example"', "#/components/"):
        assert gone not in text
    assert '"exclusiveMinimum": true' not in text and '"exclusiveMinimum": false' not in text


def test_deep_reference_chains_skip_in_bounded_time_and_stack():
    links = 3000  # far past Python's recursion limit if followed naively
    schemas = {f"A{i}": {"type": "object", "properties": {
        "next": {"$ref": f"#/components/schemas/A{i + 1}"}}} for i in range(links)}
    schemas[f"A{links}"] = {"type": "string"}

    def query(ref):
        return op(ref, parameters=[{"name": "q", "in": "query",
                                    "schema": {"$ref": f"#/components/schemas/{ref}"}}])

    server, skipped = build(doc({"/deep": {"get": query("A0")},
                                 "/shallow": {"get": query(f"A{links - 10}")}}, schemas))
    assert skipped == ["GET /deep skipped: schemas nested deeper than 100 (references included)"]
    assert list(server.tools) == [f"A{links - 10}"]
    assert len(server.tools[f"A{links - 10}"].wire["inputSchema"]["$defs"]) == 11


def test_a_document_nested_past_the_decoder_is_refused(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"openapi": "3.0.0", "paths": {}, "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(OpenAPIError, match="nested too deeply to read"):
        from_openapi(deep, CLIENT)


def test_three_thousand_operations_with_one_name_are_all_named_in_order():
    paths = {f"/p{i}": {"get": op("same")} for i in range(3000)}
    server, _ = build(doc(paths))
    assert list(server.tools)[:3] == ["same", "same_2", "same_3"]
    assert len(server.tools) == 3000 and "same_3000" in server.tools


# -- property: any document of the right outline builds, or is refused with OpenAPIError --------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["type", "$ref", "in", "name", "schema", "parameters", "requestBody", "content",
         "application/json", "properties", "items", "required", "responses", "200", "nullable",
         "allOf", "style", "explode", "operationId", "get", "post", "x"]), inner, max_size=4),
    max_leaves=12)
_refs = st.sampled_from(["#/components/schemas/A", "#/x", "#", "#/paths", "http://e/x",
                         "#/components/schemas/A/properties/b"]).map(lambda r: {"$ref": r})
_param = st.fixed_dictionaries({}, optional={
    "name": st.text(max_size=3) | st.integers(),
    "in": st.sampled_from(["path", "query", "header", "cookie", "body", 1]),
    "schema": _json | _refs, "style": st.sampled_from(["form", "simple", "deepObject", 3]),
    "explode": _json, "required": _json, "content": _json, "$ref": st.text(max_size=3)})
_op = st.fixed_dictionaries({}, optional={
    "operationId": st.text(max_size=6) | st.integers(),
    "parameters": st.lists(_param, max_size=3) | _json,
    "requestBody": _json | st.fixed_dictionaries({"content": st.dictionaries(
        st.sampled_from(["application/json", "multipart/form-data", "text/plain", "x/y"]),
        st.fixed_dictionaries({}, optional={"schema": _json | _refs}), max_size=2)}),
    "responses": _json, "tags": _json, "summary": _json, "description": _json})
_documents = st.fixed_dictionaries({"openapi": st.just("3.0.3"), "paths": st.dictionaries(
    st.sampled_from(["/a", "/b/{id}", "/{x}/{y}", "/c{", "/d}"]),
    st.fixed_dictionaries({}, optional={"get": _op, "post": _op | _json, "parameters": _json})
    | _json, max_size=3)}, optional={
    "components": st.fixed_dictionaries({}, optional={"schemas": st.dictionaries(
        st.sampled_from(["A", "B"]), _json | _refs, max_size=2)}) | _json,
    "servers": _json})


@settings(max_examples=200, deadline=None)
@given(_documents)
def test_malformed_documents_never_crash_the_build_or_the_first_listing(document):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            server = from_openapi(document, CLIENT)
        except OpenAPIError:
            return
        if server.tools:  # the first tools/list translates: a broken schema is left out
            names = {tool.name for tool in asyncio.run(listed(server))}
            assert names == set(server.tools)
    assert all(w.category is OperationSkipped for w in caught)


def test_an_output_schema_only_when_every_success_answers_with_it():
    json_ok = {"description": "", "content": {"application/json": {"schema": {"type": "object"}}}}
    other = {"description": "", "content": {"application/json": {"schema": {"type": "array"}}}}
    paths = {"/one": {"get": op("one", responses={"200": json_ok, "404": {"description": ""}})},
             "/maybe": {"get": op("maybe", responses={"200": json_ok,
                                                      "204": {"description": "none"}})},
             "/differ": {"get": op("differ", responses={"200": json_ok, "201": other})},
             "/same": {"get": op("same", responses={"200": json_ok, "201": json_ok})}}
    server, _ = build(doc(paths))
    assert {n: "outputSchema" in t.wire for n, t in server.tools.items()} == {
        "one": True, "maybe": False, "differ": False, "same": True}
