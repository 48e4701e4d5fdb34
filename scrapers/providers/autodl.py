"""AutoDL GPU marketplace: per-GPU prices per model and region (min and median), with idle GPU counts.

Sources (providers.md §4, all unofficial web endpoints, read 2026-08): the public ``machine/gpu_type``
and ``region/list`` (no login, probe dated 2026-08-20) and the logged-in market search
``POST /api/v1/machine/search`` (a report dated 2026-08-06; item fields from the mfznttkx/autodl-gpuhunter
docstrings). The market needs the raw web-session JWT in ``Authorization`` (a "Bearer " prefix fails with
登录超时), pages of at most 100, and gentle pacing (gpuhunter sleeps 0.2 s between pages: here the HTTP client's
``min_interval_s``, 0.2 s unless ``[providers.autodl] min_interval_s`` says otherwise, between any two
requests; a replay waits for nothing).

Prices arrive in 厘 (1/1000 CNY) per GPU per unit (hour for ``payg``, day/week/month for the others) and
vary per machine. Per GPU model and region we yield two :class:`RawOffer` with ``per="gpu"``: the
cheapest (``instance_type`` = the GPU name, e.g. ``"RTX 4090"``) and the median (``"RTX 4090 (median)"``),
both carrying the group's idle/total GPU counts summed over its machines and the most idle (orderable)
GPUs on any one machine (a job of N GPUs is rented on one machine), so either stays queryable per GPU-hour. A machine's
price is its ``machine_sku_info`` entry for the charge type (``current_price``, what a renter pays now),
else ``payg_price`` for pay-as-you-go; which of the two the market page shows is not verified.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.stock import Stock, from_count
from scrapers.types import Issue, ItemSkipped, ProviderMode, ProviderSettings, to_price
from vocab import HOURS_PER_UNIT, UNIT_OF_MODE, BillingMode

PROVIDER = "autodl"
GPU_TYPE_URL = "https://www.autodl.com/api/v1/machine/gpu_type"
REGION_URL = "https://www.autodl.com/api/v1/region/list"
SEARCH_URL = "https://www.autodl.com/api/v1/machine/search"
ENV_TOKEN = "AUTODL_TOKEN"
EXPIRED = "AutoDL refused the token ({}): log in again and refresh AUTODL_TOKEN"
# charge_type -> canonical billing mode (its unit and hours are vocab's UNIT_OF_MODE and HOURS_PER_UNIT)
CHARGE_TYPES: dict[str, BillingMode] = {
    "payg": BillingMode.ON_DEMAND,
    "daily": BillingMode.DAILY,
    "weekly": BillingMode.WEEKLY,
    "monthly": BillingMode.MONTHLY,
}
PAGE_SIZE = 100  # the market caps page_size at 100 (report 2026-08-06)
PAGE_PAUSE_S = 0.2  # gpuhunter's pause between pages
MAX_PAGES = 200  # 3194 payg machines on 2026-08-06 = 32 pages; 200 means something is wrong
MAX_CNY_PER_GPU_HOUR = Decimal(200)  # H800 is 8.88/GPU-hour (2026-08); 200 means the unit changed
_LI_PER_CNY = Decimal(1000)


def autodl_stock(orderable_gpus: int | None, idle_gpus: int | None) -> Stock:
    """AutoDL counts (machine/search ``gpu_idle_num`` and ``gpu_order_num``, providers.md §4.1, report
    2026-08-06): orderable GPUs decide (idle but not orderable is sold out); without ``gpu_order_num``
    the idle count decides, as before that field was read. No stock word, counts only."""
    return from_count(orderable_gpus if orderable_gpus is not None else idle_gpus)


@dataclass(frozen=True)
class GpuType:
    """One GPU model of the public catalogue, memory in GiB (``gpu_memory`` arrives in bytes)."""

    name: str
    memory_gb: float | None


@dataclass(frozen=True)
class Machine:
    """One market machine for one charge type; ``price_li`` is None when it has no price for it."""

    gpu_name: str
    region: str
    region_name: str
    gpu_memory_gb: float | None
    gpus: int
    idle: int
    price_li: int | None
    orderable: int | None = None  # gpu_order_num: GPUs that can be ordered now; None when not sent


def li_to_cny(li: int) -> Decimal:
    """厘 to yuan, exactly: 2720 -> Decimal("2.72")."""
    return Decimal(li) / _LI_PER_CNY


def _data(payload: bytes, what: str) -> Any:
    """The ``data`` of AutoDL's ``{code, msg, data}`` envelope; an expired login is a clear ScrapeError."""
    try:
        body = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ScrapeError(f"AutoDL {what}: the answer is not JSON (a login page?)") from None
    if not isinstance(body, dict):
        raise ScrapeError(f"AutoDL {what}: unexpected answer shape")
    code, msg = body.get("code"), str(body.get("msg") or "")
    if code == "AuthorizeFailed" or "登录" in msg:
        raise ScrapeError(EXPIRED.format(code or msg))
    if code not in ("Success", "OK"):  # gpuhunter accepts both
        raise ScrapeError(f"AutoDL {what}: code {code!r} {msg[:80]!r}")
    return body.get("data")


def _gib(value: Any) -> float | None:
    return round(value / 2**30, 1) if isinstance(value, int) and value > 0 else None


def parse_gpu_types(payload: bytes) -> list[GpuType]:
    """``GET machine/gpu_type`` -> the GPU catalogue."""
    data = _data(payload, "gpu_type")
    if not isinstance(data, list) or not data:
        raise ScrapeError("AutoDL gpu_type: data is not a non-empty list")
    try:
        return [GpuType(str(d["gpu_name"]), _gib(d.get("gpu_memory"))) for d in data]
    except (KeyError, TypeError):
        raise ScrapeError("AutoDL gpu_type: an entry has no gpu_name") from None


def parse_regions(payload: bytes) -> dict[str, str]:
    """``GET region/list`` -> {region_sign: region_name}."""
    data = _data(payload, "region/list")
    rows: Any = data.get("list") if isinstance(data, dict) else data
    try:
        return {str(r["region_sign"]): str(r["region_name"]) for r in rows}
    except (KeyError, TypeError):
        raise ScrapeError("AutoDL region/list: no region_sign/region_name list") from None


def _price_li(item: dict[str, Any], charge_type: str) -> int | None:
    listed = item.get("machine_sku_info")
    skus = [s for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
    raw = next((s.get("current_price") for s in skus if s.get("type") == charge_type), None)
    if raw is None and charge_type == "payg":
        raw = item.get("payg_price")
    if raw is None:
        return None
    where = f"AutoDL {charge_type} price of machine {item.get('machine_id')}"
    if isinstance(raw, bool) or not isinstance(
        raw, int
    ):  # 厘 are integers; a string or float means the shape changed
        raise ScrapeError(f"{where}: {raw!r} is not an integer number of 厘")
    li = int(to_price(raw, where))  # negative -> ScrapeError
    hours = HOURS_PER_UNIT[UNIT_OF_MODE[CHARGE_TYPES[charge_type]]]
    if li_to_cny(li) / hours > MAX_CNY_PER_GPU_HOUR:
        raise ScrapeError(f"{where}: {li} 厘 is absurd (over {MAX_CNY_PER_GPU_HOUR} CNY per GPU-hour)")
    return li


def _count(value: Any, what: str) -> int:
    """A machine's GPU count: a whole number from 0 to 64, or a numeric string of one ("3"); anything
    else skips that machine (:class:`ItemSkipped`)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if type(value) is not int or not 0 <= value <= 64:
        raise ItemSkipped(f"{what} {str(value)[:20]!r} is not a GPU count")
    return value


def _optional_count(value: Any, what: str) -> int | None:
    return None if value is None or value == "" else _count(value, what)


def parse_search_page(payload: bytes, charge_type: str) -> tuple[list[Machine], int, list[str]]:
    """One ``machine/search`` page -> (machines, result_total, reasons for machines left out).

    A machine whose GPU counts cannot be read is left out with a reason; a price that is not an
    integer number of 厘 fails the page, because every machine would share it (the unit changed).
    """
    data = _data(payload, "machine/search")
    data = data if isinstance(data, dict) else {}
    items, total = data.get("list"), data.get("result_total")
    if not isinstance(items, list) or type(total) is not int:
        raise ScrapeError("AutoDL machine/search: no data.list / data.result_total (shape changed?)")
    machines, skipped = [], []
    for item in items:
        try:
            if not isinstance(item, dict):
                raise ItemSkipped("an item is not an object")
            missing = [k for k in ("gpu_name", "region_sign", "gpu_number") if item.get(k) in (None, "")]
            if missing:
                raise ItemSkipped(f"a machine lacks {', '.join(missing)}")
            machine = Machine(
                str(item["gpu_name"]),
                str(item["region_sign"]),
                str(item.get("region_name") or item["region_sign"]),
                _gib(item.get("gpu_memory")),
                _count(item["gpu_number"], "gpu_number"),
                _optional_count(item.get("gpu_idle_num"), "gpu_idle_num") or 0,
                _price_li(item, charge_type),
                _optional_count(item.get("gpu_order_num"), "gpu_order_num"),
            )
        except ItemSkipped as exc:
            skipped.append(
                f"machine {str(item.get('machine_id') if isinstance(item, dict) else '?')[:40]}: {exc}"
            )
            continue
        machines.append(machine)
    return machines, total, skipped


def aggregate(machines: list[Machine], charge_type: str) -> list[RawOffer]:
    """Per (GPU model, region): the cheapest and the median price, the idle/total/orderable GPUs summed
    over its machines, and the most idle (orderable) GPUs on any one machine."""
    billing = CHARGE_TYPES[charge_type]
    unit = UNIT_OF_MODE[billing]
    groups: dict[tuple[str, str], list[Machine]] = defaultdict(list)
    for m in machines:
        groups[(m.gpu_name, m.region)].append(m)
    offers = []
    for (gpu, region), group in sorted(groups.items()):
        prices = sorted(li_to_cny(m.price_li) for m in group if m.price_li)
        if not prices:
            continue
        idle, total = sum(m.idle for m in group), sum(m.gpus for m in group)
        # gpu_order_num where machines send it: idle GPUs that cannot be ordered are not available.
        ordering = [min(n, m.idle) for m in group if (n := m.orderable) is not None]
        orderable = sum(ordering) if ordering else None
        # A job's GPUs are rented on one machine: the sums above do not say whether one has N idle.
        most_orderable = max(ordering) if ordering else None
        for stat, price in (("min", prices[0]), ("median", statistics.median(prices))):
            offers.append(
                RawOffer(
                    provider=PROVIDER,
                    region=region,
                    instance_type=gpu if stat == "min" else f"{gpu} (median)",
                    gpu_name=gpu,
                    gpu_count=1.0,
                    billing=billing,
                    price=price,
                    unit=unit,
                    per="gpu",
                    gpu_memory_gb=group[0].gpu_memory_gb,
                    stock_status=autodl_stock(orderable, idle),
                    idle_gpus=idle,
                    total_gpus=total,
                    orderable_gpus=orderable,
                    max_idle_gpus_per_machine=max(m.idle for m in group),
                    max_orderable_gpus_per_machine=most_orderable,
                    source=f"autodl machine/search charge_type={charge_type}",
                    extra={"stat": stat, "machines": str(len(prices)), "region_name": group[0].region_name},
                )
            )
    return offers


class AutodlScraper:
    """AutoDL market. Option ``charge_types``: any of payg, daily, weekly, monthly (default payg)."""

    name: ClassVar[str] = PROVIDER
    credential_env: ClassVar[tuple[str, ...]] = (ENV_TOKEN,)
    credential_help: ClassVar[str] = (
        "the web session token of a logged-in autodl.com browser (the Authorization header the market page "
        'sends), raw, without "Bearer"; it expires: a run that says so needs a fresh one'
    )
    http_policy: ClassVar[HttpPolicy] = HttpPolicy(min_interval_s=PAGE_PAUSE_S)
    # The options a --from-raw replay takes from the manifest, and their kind (planner/ingest/manifest.py).
    replay_options: ClassVar[dict[str, str]] = {"charge_types": "names"}
    # What to do when the market refuses the token (``planner providers --check``).
    refused_hint: ClassVar[str] = (
        "log in to autodl.com again and set AUTODL_TOKEN to the fresh token (no 'Bearer')"
    )

    @staticmethod
    def check(client: HttpClient, settings: ProviderSettings) -> str:
        """``planner providers --check``: the cheapest request of the mode in use, and what it answered."""
        token = settings.credentials.get(ENV_TOKEN, "").strip().removeprefix("Bearer ").strip()
        if token:
            body = {
                "charge_type": "payg",
                "page_index": 1,
                "page_size": 1,
                "gpu_idle_num": 0,
                "default_order": True,
            }
            answer = client.post(SEARCH_URL, json_body=body, headers={"Authorization": token})
            _, total, _ = parse_search_page(answer.content, "payg")
            return f"the market search took the token ({total} machines listed)"
        gpus = parse_gpu_types(client.get(GPU_TYPE_URL).content)
        return f"the public GPU list answered ({len(gpus)} models); no token, so no market prices"

    def __init__(self) -> None:
        self.catalog: list[GpuType] = []  # the public GPU list of the last scrape (for the catalogue)
        self.regions: dict[str, str] = {}

    def mode(self, env: Mapping[str, str]) -> ProviderMode:
        """``account`` with AUTODL_TOKEN: market prices and idle GPUs; else the public GPU list only."""
        if env.get(ENV_TOKEN):
            return ProviderMode("account", True, "market prices per GPU (min and median) and idle GPUs")
        return ProviderMode(
            "public",
            False,
            "the GPU model list only; no prices (quotes use the last known prices and their dates)",
            unlock_env=(ENV_TOKEN,),
        )

    def scrape(self, client: HttpClient, settings: ProviderSettings) -> Iterator[RawOffer | Issue]:
        """Public catalogue, then (with a token) every market page of every enabled charge type."""
        token = settings.credentials.get(ENV_TOKEN, "").strip().removeprefix("Bearer ").strip()
        try:
            self.catalog = parse_gpu_types(client.get(GPU_TYPE_URL).content)
            self.regions = parse_regions(client.get(REGION_URL).content)
        except ScrapeError as exc:
            if not token:
                raise  # the public list is all this mode reads
            yield Issue("warning", f"public GPU/region list not read: {exc}")
        if not token:
            names = ", ".join(g.name for g in self.catalog)
            yield Issue("note", f"no {ENV_TOKEN}: market prices not read; GPU list refreshed: {names}")
            return
        charge_types = list(settings.options.get("charge_types", ("payg",)))
        unknown = [c for c in charge_types if c not in CHARGE_TYPES]
        if unknown:
            raise ScrapeError(f"AutoDL: unknown charge_types {unknown}; use {', '.join(CHARGE_TYPES)}")
        wanted = set(settings.regions)
        for charge_type in charge_types:
            machines: list[Machine] = []
            skipped: list[str] = []
            for page in range(1, MAX_PAGES + 1):
                got, total, left_out = parse_search_page(
                    _search(client, token, charge_type, page), charge_type
                )
                machines += got
                skipped += left_out
                seen = len(got) + len(left_out)  # a machine left out still filled the page
                if seen < PAGE_SIZE or len(machines) + len(skipped) >= total:
                    break
            else:
                raise ScrapeError(f"AutoDL machine/search {charge_type}: more than {MAX_PAGES} pages")
            if wanted:
                machines = [m for m in machines if m.region in wanted]
            unpriced = sum(1 for m in machines if not m.price_li)
            # Every machine has a payg price (payg_price beside its SKUs); none at all is a renamed field.
            if charge_type == "payg" and machines and unpriced == len(machines):
                raise ScrapeError(
                    f"AutoDL machine/search {charge_type}: none of the {len(machines)} machines has a "
                    f"{charge_type} price (the answer's shape changed?)"
                )
            if skipped:
                yield Issue(
                    "skipped", f"AutoDL {charge_type}: {len(skipped)} machines left out ({skipped[0]})"
                )
            if unpriced:
                yield Issue("note", f"{unpriced} {charge_type} machines without a {charge_type} price")
            offers = aggregate(machines, charge_type)
            if not offers:
                yield Issue("note", f"the AutoDL market lists no priced {charge_type} machines")
            yield from offers


def _search(client: HttpClient, token: str, charge_type: str, page: int) -> bytes:
    # Body as the market SPA sends it (report 2026-08-06); gpu_idle_num 0 includes busy machines.
    body = {
        "charge_type": charge_type,
        "region_sign_list": [],
        "gpu_type_name": [],
        "machine_tag_name": [],
        "gpu_idle_num": 0,
        "mount_net_disk": False,
        "instance_disk_size_order": "",
        "date_range": "",
        "date_from": "",
        "date_to": "",
        "page_index": page,
        "page_size": PAGE_SIZE,
        "pay_price_order": "",
        "gpu_idle_type": "",
        "default_order": True,
    }
    try:
        return client.post(SEARCH_URL, json_body=body, headers={"Authorization": token}).content
    except ScrapeError as exc:
        if "HTTP 401" in str(exc) or "HTTP 403" in str(exc):
            raise ScrapeError(EXPIRED.format("HTTP 401/403")) from None
        raise
