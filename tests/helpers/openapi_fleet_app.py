"""The server each fleet worker of the OpenAPI interop check runs
(`rondo run tests/helpers/openapi_fleet_app.py --http ... --worker-id ...`): tools generated from the
stand-in shop API (tests/helpers/openapi_app.py) that OPENAPI_API_URL points at, its document fetched
once from `<url>/openapi.json`. Every worker shares RONDO_STATE_KEYS, so a confirmation asked
on one worker is accepted on another."""

import os

import httpx

import rondo
from rondo.openapi import from_openapi
from tests.helpers.openapi_app import TOKEN

API = os.environ["OPENAPI_API_URL"]
client = httpx.AsyncClient(base_url=API, headers={"Authorization": f"Bearer {TOKEN}"})
server = from_openapi(f"{API}/openapi.json", client, name="shop",
                      state=rondo.StatePolicy.from_env())
