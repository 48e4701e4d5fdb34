"""Region scope: whether a provider's region lies in mainland China or outside it (Hong Kong or abroad).

The one place that knows it. ``region_scope(provider, region)`` returns ``"mainland"`` or
``"overseas"``; Hong Kong is ``"overseas"`` (its prices, network and rules differ from the mainland's,
which is what a team in China asks about). Pure and import-light: no database, no config.

The region lists are the providers' own (shared/reference/providers.md):

- Aliyun and Volcengine name regions ``cn-<city>`` in China, ``cn-hongkong`` for Hong Kong, and
  ``ap-``/``us-``/``eu-``/``me-`` abroad: mainland is ``cn-`` except Hong Kong.
- Tencent names every region ``<area>-<city>[-suffix]`` (``ap-guangzhou``, ``ap-shanghai-fsi``,
  ``ap-hongkong``, ``ap-singapore``, ``na-ashburn``): mainland is an ``ap-`` region whose city is in
  MAINLAND_CITIES.
- AutoDL rents only from data centres in mainland China (``west-B``, ``beijing-A``, ...).
- PPIO (派欧云, the China site) names its regions ``c-<area>-<n>`` (``c-east-1``, ``c-north-1`` in its
  documented product payload): those are mainland; any other id is judged overseas. CompShare uses
  UCloud's ids (``cn-wlcb``, ``cn-sh2``; Hong Kong is ``hk``), which the ``cn-`` rule covers.
- ``unspecified`` (a snapshot point whose source names no region) counts as mainland: every such
  point is a CNY price from a provider's China site, and a source quoting an overseas region names it.
- A region written as alternatives (``cn-shanghai/cn-shenzhen``, "one of these") is mainland when
  every alternative is.

Which rule a provider's names follow is its line's ``region_naming`` in ``vocab.PROVIDER_TABLE``.
An unknown provider is judged by the ``cn-`` rule, an unknown Tencent city as overseas: a new mainland
region then shows up as "overseas" (visible, and a one-line fix here) rather than the reverse.
"""

from __future__ import annotations

from typing import Literal

from vocab import REGION_NAMING

Scope = Literal["mainland", "overseas"]
SCOPES: tuple[Scope, ...] = ("mainland", "overseas")
UNSPECIFIED_REGION = "unspecified"

# Tencent mainland cities (ap-<city>[-fsi|-adc|...]): DescribeRegions and the CVM region list.
MAINLAND_CITIES = frozenset(
    {
        "beijing",
        "shanghai",
        "guangzhou",
        "nanjing",
        "chengdu",
        "chongqing",
        "shenzhen",
        "qingyuan",
        "wuhan",
        "tianjin",
        "hangzhou",
        "jinan",
        "changsha",
        "shijiazhuang",
        "fuzhou",
        "hefei",
        "xian",
        "zhengzhou",
        "shenyang",
        "huhehaote",
    }
)
NOT_MAINLAND_CN = frozenset({"cn-hongkong", "cn-macau", "cn-taipei"})  # cn-named but outside the mainland

# Cities as people in China write them, in the Latin spelling providers' region ids use (``cn-beijing``,
# ``ap-shanghai``, ``cn-wulanchabu``), so ``--region 北京`` can be pointed at ``cn-beijing``.
CITY_LATIN = {
    "北京": "beijing",
    "上海": "shanghai",
    "广州": "guangzhou",
    "深圳": "shenzhen",
    "杭州": "hangzhou",
    "南京": "nanjing",
    "成都": "chengdu",
    "重庆": "chongqing",
    "武汉": "wuhan",
    "天津": "tianjin",
    "济南": "jinan",
    "长沙": "changsha",
    "石家庄": "shijiazhuang",
    "福州": "fuzhou",
    "合肥": "hefei",
    "西安": "xian",
    "郑州": "zhengzhou",
    "沈阳": "shenyang",
    "青岛": "qingdao",
    "清远": "qingyuan",
    "河源": "heyuan",
    "张家口": "zhangjiakou",
    "乌兰察布": "wulanchabu",
    "呼和浩特": "huhehaote",
    "香港": "hongkong",
}


def latin_region(name: str) -> str:
    """``name`` with a Chinese city name (北京, 北京市) in the Latin spelling region ids use (beijing)."""
    text = name.strip()
    for city, latin in CITY_LATIN.items():
        if text in (city, city + "市"):
            return latin
    return text


def region_scope(provider: str, region: str) -> Scope:
    """``"mainland"`` or ``"overseas"`` for one of ``provider``'s regions (canonical provider name)."""
    text = region.strip().casefold()
    if "/" in text:  # "cn-shanghai/cn-shenzhen": one of these, not said which
        parts = [p for p in text.split("/") if p.strip()]
        inside = all(region_scope(provider, p) == "mainland" for p in parts)
        return "mainland" if parts and inside else "overseas"
    if text in ("", UNSPECIFIED_REGION):
        return "mainland"
    naming = REGION_NAMING.get(provider, "cn-prefix")
    if naming == "mainland":
        return "mainland"
    if naming == "c-area":
        return "mainland" if text.startswith("c-") else "overseas"
    if naming == "area-city":
        area, _, rest = text.partition("-")
        city = rest.split("-")[0]
        return "mainland" if area == "ap" and city in MAINLAND_CITIES else "overseas"
    return "mainland" if text.startswith("cn-") and text not in NOT_MAINLAND_CN else "overseas"


def is_mainland(provider: str, region: str) -> bool:
    """``region_scope(provider, region) == "mainland"``."""
    return region_scope(provider, region) == "mainland"
