"""The message catalogue: every sentence the planner says to a team, in English and Simplified Chinese.

One plain table, :data:`MESSAGES`, maps a key to its (English, Chinese) pair; :func:`say` picks one and
fills its ``{fields}``. The alert messages, the nightly digest, the report e-mail, its CSV headers, the
HTML report and the command line's verdict lines all speak through it, so a sentence lives once in both
languages, and ``tests/test_words.py`` proves that none is missing (every key has both, with the same
fields, and every key the code asks for exists).

Chinese follows the words Chinese teams use on the providers' own pages: 按量付费 (on demand), 包月
(monthly), 竞价实例 (spot), 阿里云, 腾讯云, 火山引擎.

What machines read never changes with the language: JSON keys and values, the values in CSV cells
(``on_demand``, ``sold_out``), file names and log lines stay English. Only what people read does.

Here, in ``vocab``, because ``reports`` speaks too and never imports ``planner``; this module imports
nothing of ours.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ENGLISH = "en"
CHINESE = "zh"
LANGUAGES: tuple[str, ...] = (ENGLISH, CHINESE)

# key -> (English, 简体中文). Fields in braces are filled by ``say``; both texts name the same fields.
MESSAGES: dict[str, tuple[str, str]] = {
    # --- billing modes, as the providers' Chinese pages name them -------------------------------------
    "billing.on_demand": ("on demand", "按量付费"),
    "billing.spot": ("spot", "竞价实例"),
    "billing.daily": ("daily", "包日"),
    "billing.weekly": ("weekly", "包周"),
    "billing.monthly": ("monthly", "包月"),
    "billing.yearly": ("yearly", "包年"),
    # --- providers ------------------------------------------------------------------------------------
    "provider.aliyun": ("Aliyun", "阿里云"),
    "provider.tencent": ("Tencent Cloud", "腾讯云"),
    "provider.volcengine": ("Volcengine", "火山引擎"),
    "provider.autodl": ("AutoDL", "AutoDL"),
    "provider.ppio": ("PPIO", "PPIO 派欧云"),
    "provider.compshare": ("CompShare", "优云智算"),
    # --- stock and refresh statuses -------------------------------------------------------------------
    "stock.available": ("available", "有货"),
    "stock.low": ("low", "库存紧张"),
    "stock.sold_out": ("sold out", "售罄"),
    "stock.unknown": ("unknown", "未知"),
    "stock.not_listed": ("not listed", "已下架"),
    "status.ok": ("ok", "成功"),
    "status.partial": ("partial", "部分成功"),
    "status.failed": ("failed", "失败"),
    "status.skipped": ("skipped", "已跳过"),
    "status.running": ("running", "运行中"),
    "status.interrupted": ("interrupted", "已中断"),
    "status.never": ("never refreshed", "从未刷新"),
    # --- what a CNY-per-GPU-hour figure is (vocab.gpu_hour_basis) ---------------------------------------
    "basis.per_hour": ("{billing}, per hour", "{billing}，按小时"),
    "basis.period": ("{billing}, {hours} h a {unit}", "{billing}，每{unit} {hours} 小时"),
    "basis.for_hours": ("{billing}, for {hours} h", "{billing}，按 {hours} 小时计"),
    "unit.hour": ("hour", "小时"),
    "unit.day": ("day", "天"),
    "unit.week": ("week", "周"),
    "unit.month": ("month", "月"),
    "unit.year": ("year", "年"),
    "money.cny_per_gpu_hour": ("CNY {amount}/GPU-h", "{amount} 元/卡时"),
    "words.cny_per_gpu_hour": ("CNY/GPU-h", "元/卡时"),
    "words.list_separator": (", ", "、"),
    # --- the HTML report (reports/page.py) -----------------------------------------------------------
    "page.title": ("GPU rental prices, {day}", "GPU 租用价格报告 {day}"),
    "page.report_day": ("Report day", "报告日期"),
    "page.newest_price": ("Newest price seen (UTC)", "最新价格日期（UTC）"),
    "page.data_age": ("Data age", "数据时效"),
    "page.generated": ("Generated", "生成时间"),
    "page.no_prices": ("no price in the database yet", "数据库中还没有价格"),
    "page.age_fresh": ("current (seen today or yesterday)", "最新（今天或昨天采集）"),
    "page.age_days": ("{days} days old: no newer price was seen", "已有 {days} 天，没有更新的价格"),
    "page.filtered": ("Only: {names}", "仅包含：{names}"),
    "page.footer": (
        "Written by planner. The CSV files beside this page ({files}) hold every row.",
        "由 planner 生成。本页旁的 CSV 文件（{files}）包含全部数据。",
    ),
    "page.col.gpu": ("GPU", "GPU 型号"),
    "page.col.billing": ("Billing", "计费方式"),
    "page.col.provider": ("Provider", "云厂商"),
    "page.col.offer": ("Provider · region, instance type", "云厂商 · 地域，实例规格"),
    "page.col.gpus_per_instance": ("GPUs per instance", "每实例 GPU 数"),
    "page.col.list_price": ("List price", "标价"),
    "page.col.on_demand": ("On demand, CNY/GPU-h", "按量付费（元/卡时）"),
    "page.col.cheapest_spot": ("Spot, CNY/GPU-h", "竞价实例（元/卡时）"),
    "page.col.offers": ("Offers (providers)", "在售规格（厂商数）"),
    "page.col.observed": ("Seen", "采集时间"),
    "page.col.idle_gpus": ("Idle GPUs", "空闲 GPU"),
    "page.col.where_available": ("Rentable at", "可租地域"),
    "page.col.stock": ("Stock", "库存"),
    "page.col.idle_total": ("Idle / total GPUs", "空闲 / 总 GPU"),
    "page.col.since": ("Compared with", "对比"),
    "page.col.old_price": ("Before, CNY/GPU-h", "原价（元/卡时）"),
    "page.col.new_price": ("Now, CNY/GPU-h", "现价（元/卡时）"),
    "page.col.change": ("Change", "涨跌"),
    "page.col.dates": ("Seen on", "采集日期"),
    "page.col.status": ("Last refresh", "最近刷新"),
    "page.col.finished": ("Finished", "完成时间"),
    "page.col.duration": ("Took", "耗时"),
    "page.col.offers_seen": ("Offers seen", "发现规格"),
    "page.col.prices_stored": ("Prices stored", "保存价格"),
    "page.col.prices_changed": ("Prices changed", "价格变动"),
    "page.col.error": ("Error", "错误"),
    "page.price_per_unit": ("{amount} {currency}/{unit}", "{amount} {currency}/{unit}"),
    "page.price_cny_per_unit": ("{amount} CNY/{unit}", "{amount} 元/{unit}"),
    "page.from_snapshot": ("bundled snapshot", "内置快照"),
    "page.seconds": ("{seconds} s", "{seconds} 秒"),
    "page.cheapest.title": ("Cheapest rentable option per GPU", "各 GPU 当前可租的最低价"),
    "page.cheapest.lead": (
        "Per GPU model, the cheapest offer that can be rented now, in CNY per GPU-hour; the prices CSV "
        "file lists every price.",
        "每个 GPU 型号当前可租的最便宜方案，单位为元/卡时；全部价格见 prices CSV 文件。",
    ),
    "page.cheapest.none": ("No GPU has a rentable price.", "没有可租的价格。"),
    "page.trends.title": ("Price trends", "价格走势"),
    "page.trends.lead": (
        "Each day's cheapest on-demand price per GPU-hour over the {days} days from {first} to {last}; "
        "the red point is the price now.",
        "每天按量付费的最低卡时价，{first} 至 {last} 共 {days} 天；红点为当前价格。",
    ),
    "page.trends.off": (
        "This report was written without its price charts ([report] chart = false).",
        "本报告未生成价格走势图（[report] chart = false）。",
    ),
    "page.trends.none": ("No GPU has an on-demand price in these days.", "这段时间内没有按量付费价格。"),
    "page.chart.date": ("{month}/{day}", "{month}月{day}日"),
    "page.chart.point": ("{day}: CNY {amount}/GPU-h", "{day}：{amount} 元/卡时"),
    "page.chart.x_axis": ("Day (UTC)", "日期（UTC）"),
    "page.chart.change": ("{pct}% since {since}", "较 {since} {pct}%"),
    "page.chart.alt": (
        "{gpu}: the cheapest on-demand price, CNY {start}/GPU-h on {first} and CNY {end}/GPU-h on {last}",
        "{gpu}：按量付费最低价，{first} 为 {start} 元/卡时，{last} 为 {end} 元/卡时",
    ),
    "page.stock.title": ("Stock", "库存"),
    "page.stock.lead": (
        "Offers per GPU model by what the provider says of their stock, the idle GPUs it reports, and "
        "where one can be rented now.",
        "按云厂商公布的库存状态统计各 GPU 型号的在售规格数、空闲 GPU 数，以及目前可租的地域。",
    ),
    "page.stock.none": ("No provider reported stock.", "没有云厂商公布库存。"),
    "page.stock.details": ("Every instance ({rows})", "全部实例（{rows}）"),
    "page.changes.title": ("What changed since the last report", "与上次报告相比的变化"),
    "page.changes.lead": (
        "Price changes against the previous day and the previous week, biggest moves first.",
        "与前一日和上周相比的价格变动，按变动幅度排序。",
    ),
    "page.changes.none": ("No price changed.", "价格没有变化。"),
    "page.changes.more": (
        "The {shown} biggest of {rows} changes; the changes CSV file has them all.",
        "仅显示 {rows} 项变动中幅度最大的 {shown} 项，完整列表见 changes CSV 文件。",
    ),
    "page.since.day": ("previous day", "前一日"),
    "page.since.week": ("previous week", "上周"),
    "page.health.title": ("Health of each provider's refresh", "各云厂商数据刷新状态"),
    "page.health.lead": ("The last refresh of each provider.", "每家云厂商最近一次刷新。"),
    "page.health.failing": ("Did not succeed: {providers}.", "未成功：{providers}。"),
    "page.health.none": ("No provider was refreshed.", "还没有刷新过任何云厂商。"),
}

_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def say(key: str, lang: str, /, **values: object) -> str:
    """The catalogue's sentence ``key`` in ``lang`` ("en" or "zh"), its fields filled from ``values``.

    A key or language the catalogue lacks is a bug (KeyError, ValueError), never a silent English
    fallback: the catalogue test finds it first."""
    english, chinese = MESSAGES[key]
    if lang not in LANGUAGES:
        raise ValueError(f"language {lang!r} is not one of {', '.join(LANGUAGES)}")
    return (chinese if lang == CHINESE else english).format(**values)


def word(prefix: str, value: str, lang: str) -> str:
    """The word for a value of ours in ``lang`` (``word("billing", "on_demand", "zh")`` -> 按量付费); a
    value the catalogue has no word for (a provider added later) is shown as it is."""
    key = f"{prefix}.{value}"
    return say(key, lang) if key in MESSAGES else str(value)


def language_from_environment(env: Mapping[str, str] | None = None) -> str:
    """ "zh" when the locale the user runs in is Chinese (``LC_ALL``, then ``LC_MESSAGES``, then ``LANG``,
    the first one set, as POSIX reads them: ``zh_CN.UTF-8``), else "en"."""
    env = os.environ if env is None else env
    for name in _LOCALE_VARIABLES:
        value = env.get(name, "")
        if value:
            return CHINESE if value.lower().startswith("zh") else ENGLISH
    return ENGLISH
