"""The message catalogue: every sentence the planner says to a team, in English and Simplified Chinese.

One plain table, :data:`MESSAGES`, maps a key to its (English, Chinese) pair; :func:`say` picks one and
fills its ``{fields}``. The alert messages, the nightly digest, the report e-mail, its CSV headers, the
HTML report and the command line's verdict lines all speak through it, so a sentence lives once in both
languages, and ``tests/vocabulary/test_message_catalogue.py`` proves that none is missing (every key has both, with the same
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
    "words.item_separator": ("; ", "；"),
    "words.sentence_gap": (" ", ""),  # between two sentences: Chinese full stops need no space
    # --- alert messages (planner.alerts: rules, conditions, message) -----------------------------------
    "alert.title": (
        "planner: {rules} GPU alert(s), {offers} offer(s)",
        "planner：{rules} 条 GPU 提醒规则触发，涉及 {offers} 个报价",
    ),
    "alert.offer": (
        "{provider} {region} {instance}: {price} CNY/GPU-h ({basis}), stock {stock}",
        "{provider} {region} {instance}：{price} 元/卡时（{basis}），库存：{stock}",
    ),
    "alert.reason": (" ({reason})", "（{reason}）"),
    "alert.rule": ("**{rule}**: {description}", "**{rule}**：{description}"),
    "alert.more": (
        "… and {count} more (`planner alerts list`)",
        "…… 另有 {count} 个报价，运行 `planner alerts list` 查看",
    ),
    "alert.cut": (
        "… {count} more line(s): `planner alerts list` shows all",
        "…… 另有 {count} 行未显示，运行 `planner alerts list` 查看全部",
    ),
    "alert.late": ("{reason}; late: fired {when}", "{reason}；补发，首次触发于 {when}"),
    "alert.earlier": ("earlier", "早前"),
    "alert.idle_of": ("{idle}/{total} idle", "空闲 {idle}/{total}"),
    "alert.per_machine": (", at most {most} on one machine", "，单机最多 {most} 张"),
    "reason.below": ("{price} CNY/GPU-h, under {limit}", "{price} 元/卡时，低于 {limit}"),
    "reason.run_before": ("its price at the run before", "上次刷新的价格"),
    "reason.window_median": ("its {days}-day median", "近 {days} 天中位价"),
    "reason.drop": (
        "{price} CNY/GPU-h, {drop}% under {than} {ref}",
        "{price} 元/卡时，较{than}（{ref}）低 {drop}%",
    ),
    "reason.idle": ("{idle} GPUs idle (at least {wanted})", "空闲 {idle} 张卡（要求至少 {wanted} 张）"),
    "reason.back_in_stock": (
        "back in stock ({stock}), sold out at the run before",
        "重新有货（{stock}），上次刷新时售罄",
    ),
    "reason.new": ("new at {provider}: {gpu} as {instance}", "{provider} 新上架：{gpu}（{instance}）"),
    "rule.any_gpu": ("any GPU", "任意 GPU"),
    "rule.below": ("{scope} under {limit} CNY/GPU-h", "{scope} 低于 {limit} 元/卡时"),
    "rule.drop": (
        "{scope} {percent}% or more under its {days}-day median",
        "{scope} 比 {days} 天中位价低 {percent}% 以上",
    ),
    "rule.idle": ("{scope} with {wanted}+ idle GPUs", "{scope} 空闲不少于 {wanted} 张卡"),
    "rule.back_in_stock": ("{scope} back in stock", "{scope} 重新有货"),
    "rule.new": ("{scope}: new offers", "{scope}：新上架"),
    # --- the report e-mail (reports.summary) ---------------------------------------------------------
    "mail.subject": (
        "GPU prices {day}: {prices} prices, {changes} change(s)",
        "GPU 价格 {day}：{prices} 条价格，{changes} 处变动",
    ),
    "mail.subject_failed": (", {failed} provider(s) failed", "，{failed} 家云厂商刷新失败"),
    "mail.heading": ("GPU prices, report of {day}", "GPU 价格报告 {day}"),
    "mail.heading_scope": (" ({scope})", "（{scope}）"),
    "mail.none": ("none", "无"),
    "mail.facts": (
        "{prices} prices from {providers} provider(s); newest observation {newest} (UTC day).",
        "共 {prices} 条价格，来自 {providers} 家云厂商；最新采集日期 {newest}（UTC）。",
    ),
    "mail.all_snapshot": (
        "Every price comes from the bundled snapshot: run `planner refresh` for today's prices.",
        "所有价格都来自内置快照：运行 `planner refresh` 获取今天的价格。",
    ),
    "mail.no_prices_match": (
        "No prices match: run `planner refresh`, or widen the filters.",
        "没有符合条件的价格：运行 `planner refresh`，或放宽筛选条件。",
    ),
    "mail.list_price": ("CNY {amount}/GPU-h ({basis})", "{amount} 元/卡时（{basis}）"),
    "mail.where": ("{provider} {instance} ({region})", "{provider} {instance}（{region}）"),
    "mail.since_day": ("since the previous day", "较前一天"),
    "mail.since_week": ("since the previous week", "较前一周"),
    "mail.move_offer": (
        "{gpu} {provider} {instance} ({region}), {billing}",
        "{gpu} {provider} {instance}（{region}），{billing}",
    ),
    "mail.move_prices": ("{old} -> {new} CNY/GPU-h", "{old} → {new} 元/卡时"),
    "mail.file_rows": ("{rows} rows: {what}", "{rows} 行：{what}"),
    "mail.cheapest_title": (
        "Cheapest per GPU-hour: list price, any billing mode (a period's price over all its hours)",
        "每卡时最低价：标价，任意计费方式（包日/包周/包月/包年价格按周期内全部小时数折算）",
    ),
    "mail.cheapest_first": (
        " (the first {shown} of {total} GPU models, the GPUs teams rent first; all in the cheapest CSV)",
        "；共 {total} 个 GPU 型号，这里列出前 {shown} 个，团队常租的型号在前，全部见 cheapest CSV",
    ),
    "mail.no_prices": ("No prices.", "没有价格。"),
    "mail.moves_title": ("Biggest price moves", "价格变动最大的报价"),
    "mail.no_moves": (
        "No price changed since the previous day or week.",
        "与前一天或前一周相比，没有价格变动。",
    ),
    "mail.problems_title": ("Providers whose last refresh did not succeed", "上次刷新未成功的云厂商"),
    "mail.no_problems": ("None.", "无。"),
    "mail.never_refreshed": (
        "No refresh recorded for: {providers}.",
        "以下云厂商没有刷新记录：{providers}。",
    ),
    "mail.chart_inline": ("the chart is in the HTML version and in {file}", "图表见 HTML 版本和 {file}"),
    "mail.chart_file": ("chart: {file}", "图表：{file}"),
    "mail.chart_title": (
        "Cheapest on-demand CNY per GPU-hour (on_demand, per hour), {first} to {last}; the last figure is the cheapest that can be rented now",
        "按量付费每卡时最低价（元），{first} 至 {last}；末尾数值为当前可租的最低价",
    ),
    "mail.chart_span": ("{span} CNY/GPU-h", "{span} 元/卡时"),
    "mail.chart_more": ("{count} more GPU model(s)", "另有 {count} 个 GPU 型号"),
    "mail.chart_more_where": ("in the cheapest CSV", "见 cheapest CSV"),
    "mail.no_on_demand": ("no on-demand price", "无按量付费价格"),
    "mail.on_demand_beside": ("on_demand CNY {amount}/GPU-h", "按量付费 {amount} 元/卡时"),
    "mail.block_heading": ("{title} ({where}):", "{title}（{where}）："),
    "mail.section_heading": ("{title}:", "{title}："),
    "mail.files_text": (
        "Attached files (the CSV files are UTF-8 and open in Excel or WPS):",
        "附件（CSV 文件为 UTF-8 编码，可用 Excel 或 WPS 打开）：",
    ),
    "mail.files_html": ("Attached files", "附件"),
    "mail.file_line": ("{name}  ({what})", "{name}（{what}）"),
    "mail.file_item": (": ", "："),
    "mail.page": (
        "The whole report, with price trends, stock and each provider's health, is the attached web page {file}: open it in any browser (it fetches nothing).",
        "完整报告（含价格走势图、库存和各云厂商刷新状态）见附件网页 {file}：用任意浏览器打开即可（无需联网）。",
    ),
    "mail.page_file": ("the report as one web page: open it in a browser", "报告网页：用浏览器打开"),
    "table.prices": (
        "the latest price of every GPU instance and billing mode, with CNY per GPU-hour",
        "每个 GPU 实例和计费方式的最新价格，含每卡时价格（元）",
    ),
    "table.cheapest": ("the cheapest option per GPU model", "每个 GPU 型号的最低价方案"),
    "table.changes": (
        "price changes since the previous day and the previous week",
        "较前一天和前一周的价格变动",
    ),
    "table.availability": (
        "stock per instance, where the provider reports it",
        "各实例库存（仅限公布库存的云厂商）",
    ),
    "table.health": ("the last refresh of each provider", "各云厂商最近一次刷新"),
    # --- the nightly digest to the report channels (planner.alerts.digest) ------------------------------
    "digest.title": ("planner: GPU prices {day}", "planner：GPU 价格 {day}"),
    "digest.cheapest": (
        "**Cheapest per GPU-hour** (list price, any billing mode)",
        "**每卡时最低价**（标价，任意计费方式）",
    ),
    "digest.cheapest_line": (
        "{gpu}: {amount} CNY/GPU-h ({basis}), {provider} {instance} ({region})",
        "{gpu}：{amount} 元/卡时（{basis}），{provider} {instance}（{region}）",
    ),
    "digest.on_demand_beside": ("; on_demand {amount}", "；按量付费 {amount}"),
    "digest.no_prices": ("no prices: run `planner refresh`", "没有价格：运行 `planner refresh`"),
    "digest.changes": ("**Changes**", "**价格变动**"),
    "digest.move": (
        "{gpu} {provider} {instance} ({region}): {change}% ({old} -> {new})",
        "{gpu} {provider} {instance}（{region}）：{change}%（{old} → {new}）",
    ),
    "digest.changes_all": ("{count} price change(s) in all", "共 {count} 处价格变动"),
    "digest.no_change": ("no price changed", "没有价格变动"),
    "digest.providers": ("**Providers**", "**云厂商**"),
    "digest.problem": ("{provider}: {status}", "{provider}：{status}"),
    "digest.all_ok": ("every provider's last refresh succeeded", "各云厂商最近一次刷新均成功"),
    # --- the report's CSV headers (reports.build.write_report): English is the column's own name --------
    "column.gpu_model": ("gpu_model", "GPU 型号"),
    "column.cny_per_gpu_hour": ("cny_per_gpu_hour", "每卡时价格（元）"),
    "column.provider": ("provider", "云厂商"),
    "column.region": ("region", "地域"),
    "column.instance_type": ("instance_type", "实例规格"),
    "column.gpus_per_instance": ("gpus_per_instance", "每实例卡数"),
    "column.billing": ("billing", "计费方式"),
    "column.price": ("price", "价格"),
    "column.currency": ("currency", "币种"),
    "column.unit": ("unit", "计价单位"),
    "column.vcpus": ("vcpus", "vCPU 数"),
    "column.memory_gb": ("memory_gb", "内存（GB）"),
    "column.observed_at_utc": ("observed_at_utc", "采集时间（UTC）"),
    "column.from_snapshot": ("from_snapshot", "来自内置快照"),
    "column.gpu_note": ("gpu_note", "GPU 备注"),
    "column.source": ("source", "来源"),
    "column.since": ("since", "比较区间"),
    "column.old_on": ("old_on", "原价日期"),
    "column.new_on": ("new_on", "新价日期"),
    "column.old_price": ("old_price", "原价"),
    "column.new_price": ("new_price", "新价"),
    "column.change_pct": ("change_pct", "涨跌幅（%）"),
    "column.old_cny_per_gpu_hour": ("old_cny_per_gpu_hour", "原每卡时价格（元）"),
    "column.new_cny_per_gpu_hour": ("new_cny_per_gpu_hour", "新每卡时价格（元）"),
    "column.stock_status": ("stock_status", "库存状态"),
    "column.idle_gpus": ("idle_gpus", "空闲卡数"),
    "column.total_gpus": ("total_gpus", "总卡数"),
    "column.max_idle_gpus_per_machine": ("max_idle_gpus_per_machine", "单机最多空闲卡数"),
    "column.status": ("status", "状态"),
    "column.started_at_utc": ("started_at_utc", "开始时间（UTC）"),
    "column.finished_at_utc": ("finished_at_utc", "结束时间（UTC）"),
    "column.duration_s": ("duration_s", "耗时（秒）"),
    "column.offers_seen": ("offers_seen", "获取报价数"),
    "column.prices_stored": ("prices_stored", "入库价格数"),
    "column.prices_changed": ("prices_changed", "变动价格数"),
    "column.mode": ("mode", "模式"),
    "column.offers_skipped": ("offers_skipped", "跳过报价数"),
    "column.prices_flagged": ("prices_flagged", "可疑价格数"),
    "column.unknown_gpus": ("unknown_gpus", "未识别的 GPU"),
    "column.error": ("error", "错误"),
    "column.offers": ("offers", "报价数"),
    "column.providers": ("providers", "云厂商数"),
    "column.cheapest_spot_cny_per_gpu_hour": (
        "cheapest_spot_cny_per_gpu_hour",
        "竞价实例最低每卡时价格（元）",
    ),
    "column.scope": ("scope", "地域范围"),
    "column.cny_per_gpu_hour_basis": ("cny_per_gpu_hour_basis", "每卡时价格口径"),
    "column.on_demand_cny_per_gpu_hour": ("on_demand_cny_per_gpu_hour", "按量付费每卡时价格（元）"),
    "column.gpu_group": ("gpu_group", "GPU 类别"),
    # --- the report's region scope (planner.answers.report) --------------------------------------------
    "scope.all": ("every region", "所有地域"),
    "scope.mainland": ("the mainland", "中国大陆"),
    "scope.overseas": ("Hong Kong and abroad", "中国香港及海外"),
    "report.scope_all": (
        'Cheapest options cover every region ([quote] scope = "all").',
        '最低价覆盖所有地域（[quote] scope = "all"）。',
    ),
    "report.scope_some": (
        'Cheapest options cover {scope} only ([quote] scope = "{name}"); the prices file lists every region.',
        '最低价只覆盖{scope}（[quote] scope = "{name}"）；prices 文件列出所有地域。',
    ),
    "report.cheaper_outside": (
        'A cheaper option outside {scope}: {provider} {region} {instance} on {billing}, {gpu} at CNY {amount} per GPU-hour (observed {day}; [quote] scope = "all" includes it).',
        '{scope}以外有更便宜的方案：{provider} {region} {instance}（{billing}），{gpu} 每卡时 {amount} 元（采集于 {day}；设置 [quote] scope = "all" 即可纳入）。',
    ),
    # --- the commands' verdict lines (planner.views) ---------------------------------------------------
    "quote.verdict": (
        "Recommendation: {provider} {instance} ({region}), {instances} instance(s) on {billing}: CNY {total} in total, CNY {price} per GPU-hour ({state}).",
        "建议：{provider} {instance}（{region}），{instances} 个实例（{billing}），共 {total} 元，合每卡时 {price} 元（{state}）。",
    ),
    "quote.verdict_none": (
        "Recommendation: none: no option can be rented now.",
        "建议：暂无，目前没有可租的方案。",
    ),
    "quote.available": ("available", "有货"),
    "quote.unstated": ("stock not stated", "库存未公布"),
    "tco.verdict_buy": (
        "Recommendation: buy: buying costs {buy} CNY per used GPU-hour against {rent} renting.",
        "建议：购买。按实际使用卡时计，购买 {buy} 元/卡时，租用 {rent} 元/卡时。",
    ),
    "tco.verdict_rent": (
        "Recommendation: rent: buying costs {buy} CNY per used GPU-hour against {rent} renting.",
        "建议：租用。按实际使用卡时计，购买 {buy} 元/卡时，租用 {rent} 元/卡时。",
    ),
    "tco.break_even": (
        " Break-even at {hours} busy hours per GPU ({share} utilisation).",
        "盈亏平衡点：每卡使用 {hours} 小时（利用率 {share}）。",
    ),
    "tco.never": (" Buying never breaks even at this rental price.", "按当前租价，购买永远无法回本。"),
    "tco.beyond": (
        " Buying would break even only at {hours} busy hours per GPU, more than the {cap} in the horizon.",
        "每卡需使用 {hours} 小时才能回本，超过测算年限内每卡的总时长 {cap} 小时。",
    ),
    "chart.alt": (
        "Line chart: the cheapest on-demand CNY per GPU-hour per day from {first} to {last}: {values}.",
        "折线图：{first} 至 {last} 每天按量付费每卡时最低价（元）：{values}。",
    ),
    "chart.alt_to": (" to {last}", " 至 {last}"),
    # --- the HTML report (reports/page.py) -----------------------------------------------------------
    "page.title": ("GPU rental prices, {day}", "GPU 租用价格报告 {day}"),
    "page.report_day": ("Report day", "报告日期"),
    "page.newest_price": ("Newest price seen (UTC)", "最新价格日期（UTC）"),
    "page.data_age": ("Data age", "数据时效"),
    "page.generated": ("Generated", "生成时间"),
    "page.no_prices": ("no price in the database yet", "数据库中还没有价格"),
    "page.age_fresh": ("current (seen today or yesterday)", "最新（今天或昨天采集）"),
    "page.age_days": ("{days} days old: no newer price was seen", "数据已 {days} 天未更新"),
    "page.filtered": ("Only: {names}", "仅包含：{names}"),
    "page.footer": (
        "Written by planner. The CSV files beside this page ({files}) hold every row.",
        "由 planner 生成。与本页同目录的 CSV 文件（{files}）包含全部数据。",
    ),
    "page.col.gpu": ("GPU", "GPU 型号"),
    "page.col.billing": ("Billing", "计费方式"),
    "page.col.provider": ("Provider", "云厂商"),
    "page.col.offer": ("Provider · region, instance type", "云厂商 · 地域，实例规格"),
    "page.col.gpus_per_instance": ("GPUs per instance", "每实例卡数"),
    "page.col.list_price": ("List price", "标价"),
    "page.col.on_demand": ("On demand, CNY/GPU-h", "按量付费（元/卡时）"),
    "page.col.cheapest_spot": ("Spot, CNY/GPU-h", "竞价实例（元/卡时）"),
    "page.col.offers": ("Offers (providers)", "报价数（云厂商数）"),
    "page.col.observed": ("Seen", "采集时间"),
    "page.col.idle_gpus": ("Idle GPUs", "空闲卡数"),
    "page.col.where_available": ("Rentable at", "可租地域"),
    "page.col.stock": ("Stock", "库存"),
    "page.col.idle_total": ("Idle / total GPUs", "空闲 / 总卡数"),
    "page.col.since": ("Compared with", "对比"),
    "page.col.old_price": ("Before, CNY/GPU-h", "原价（元/卡时）"),
    "page.col.new_price": ("Now, CNY/GPU-h", "现价（元/卡时）"),
    "page.col.change": ("Change", "涨跌幅"),
    "page.col.dates": ("Seen on", "采集日期"),
    "page.col.status": ("Last refresh", "刷新状态"),
    "page.col.finished": ("Finished", "完成时间"),
    "page.col.duration": ("Took", "耗时"),
    "page.col.offers_seen": ("Offers seen", "获取报价数"),
    "page.col.prices_stored": ("Prices stored", "入库价格数"),
    "page.col.prices_changed": ("Prices changed", "变动价格数"),
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
        "Each day's cheapest on-demand price per GPU-hour over the {days} days from {first} to {last}; the red point is the price now.",
        "{first} 至 {last}（共 {days} 天）每天按量付费的每卡时最低价；红点为当前价格。",
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
        "Offers per GPU model by what the provider says of their stock, the idle GPUs it reports, and where one can be rented now.",
        "按云厂商公布的库存状态统计各 GPU 型号的报价数、空闲卡数，以及目前可租的地域。",
    ),
    "page.stock.none": ("No provider reported stock.", "没有云厂商公布库存。"),
    "page.stock.details": ("Every instance ({rows})", "全部实例（{rows}）"),
    "page.changes.title": ("What changed since the last report", "与上次报告相比的变化"),
    "page.changes.lead": (
        "Price changes against the previous day and the previous week, biggest moves first.",
        "与前一天和前一周相比的价格变动，按变动幅度从大到小排序。",
    ),
    "page.changes.none": ("No price changed.", "价格没有变化。"),
    "page.changes.more": (
        "The {shown} biggest of {rows} changes; the changes CSV file has them all.",
        "仅显示 {rows} 项变动中幅度最大的 {shown} 项，完整列表见 changes CSV 文件。",
    ),
    "page.since.day": ("previous day", "前一天"),
    "page.since.week": ("previous week", "前一周"),
    "page.health.title": ("Health of each provider's refresh", "各云厂商数据刷新状态"),
    "page.health.lead": ("The last refresh of each provider.", "每家云厂商最近一次刷新。"),
    "page.health.failing": ("Did not succeed: {providers}.", "刷新未成功：{providers}。"),
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


def named(prefix: str, value: object, lang: str) -> str:
    """A value of ours as a message names it: as stored in English (``aliyun``, ``on_demand``: what the
    English messages have always said, and what a user types back), the team's word in any other
    language (阿里云, 按量付费). The report page, written for reading only, uses :func:`word` in both."""
    return str(value) if lang == ENGLISH else word(prefix, str(value), lang)


def language_from_environment(env: Mapping[str, str] | None = None) -> str:
    """ "zh" when the locale the user runs in is Chinese (``LC_ALL``, then ``LC_MESSAGES``, then ``LANG``,
    the first one set, as POSIX reads them: ``zh_CN.UTF-8``), else "en"."""
    env = os.environ if env is None else env
    for name in _LOCALE_VARIABLES:
        value = env.get(name, "")
        if value:
            return CHINESE if value.lower().startswith("zh") else ENGLISH
    return ENGLISH
