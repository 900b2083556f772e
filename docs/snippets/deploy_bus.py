# file: docs/snippets/deploy_bus.py
import asyncio

import rondo
from rondo.fleet import MemoryBus, use_bus

# Two workers of one server. In a fleet each is its own process and the bus is
# RedisBus(url=...); `rondo run --redis URL` sets that up. A MemoryBus shows the contract.
bus = MemoryBus()
workers = [rondo.Server("catalog"), rondo.Server("catalog")]
for worker in workers:
    worker.tool(lambda sku: f"{sku}: in stock", name="stock", description="Stock of a SKU.")
    use_bus(worker, bus)


async def main() -> None:
    async with rondo.Client(workers[0]) as a, a.listen(tools=True) as stream:
        workers[1].notify_tools_changed()  # raised on worker B...
        note = await asyncio.wait_for(anext(stream), 5)
        assert note["method"] == "notifications/tools/list_changed"  # ...heard on worker A
        print("worker A heard", note["method"])


asyncio.run(main())
