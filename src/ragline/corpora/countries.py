"""The fictional-countries world (Lecture 12, §0), in English or Chinese, generated from a seed.

Lecture 12 separates "what the model looked up" from "what it already knew" with an invented world:
40 countries, each described by 4 short documents. Here the four documents are geography (capital,
the river the capital lies on, a neighbour), economy (population, currency, main export), history
(founding year, founder, official language) and government (leader, the leader's birth year).

Question types, each exposing one retrieval difficulty:

* ``direct`` -- worded like the document ("What is the capital of Norzanos?");
* ``paraphrase`` -- synonyms the document does not use ("Where does the government of Norzanos
  sit?"): vocabulary mismatch; "What tongue do people in X speak?" even matches the wrong
  (economy) document through "people" (Lecture 12, §3.1);
* ``multihop`` -- two documents, and the question names neither the second document's country nor
  its subject ("What is the currency of the country whose capital is X?"; Lecture 12, §4.3);
* ``arithmetic`` -- two facts and a calculation ("How many years passed between the founding of A
  and B?"; Lecture 12, §5.2): the answer is computed and never appears in a document.

``language="zh"`` renders the *same* world in Chinese from Chinese templates: every name is
transliterated syllable by syllable (``nor`` -> 诺), so ids, facts and answers correspond one to one
and a Chinese analyzer or a multilingual embedder can be measured against the English run.

``DEFAULT_SEED`` is the evaluation world; any other seed (``TRAIN_SEED``) builds a training world
whose names start with other syllables, so it never shares a name with the evaluation world.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ragline.corpora.base import Corpus, Fact, Question
from ragline.errors import ConfigError
from ragline.types import Document

DEFAULT_SEED = 224
TRAIN_SEED = 2241
LANGUAGES = ("en", "zh")
COUNTRY_TYPES = ("direct", "paraphrase", "multihop", "arithmetic")
ASPECTS = ("geography", "economy", "history", "government")

__all__ = ["COUNTRY_TYPES", "DEFAULT_SEED", "LANGUAGES", "TRAIN_SEED", "CountriesCorpus", "build_countries"]

# --- names: syllables with a Chinese transliteration ---------------------------------------------
# A word is initial + medial + final (3 syllables) or initial + final (2 syllables, given names).
# The two worlds use disjoint initials, hence disjoint names in both scripts; the three syllable
# sets use disjoint characters, so no 2-syllable name can occur inside a 3-syllable one in Chinese.

INITIALS: dict[str, list[tuple[str, str]]] = {
    "eval": [
        ("ba", "巴"),
        ("bel", "贝"),
        ("bor", "博"),
        ("da", "达"),
        ("del", "德"),
        ("dor", "多"),
        ("ka", "卡"),
        ("kel", "凯"),
        ("kor", "科"),
        ("ma", "马"),
        ("mer", "梅"),
        ("mor", "莫"),
        ("na", "纳"),
        ("nel", "内"),
        ("nor", "诺"),
        ("ta", "塔"),
        ("tel", "泰"),
        ("tor", "托"),
    ],
    "train": [
        ("fa", "法"),
        ("fel", "费"),
        ("for", "福"),
        ("ga", "加"),
        ("gel", "格"),
        ("gor", "戈"),
        ("ha", "哈"),
        ("hel", "赫"),
        ("hor", "霍"),
        ("la", "拉"),
        ("lor", "洛"),
        ("pa", "帕"),
        ("per", "佩"),
        ("pol", "波"),
        ("sa", "萨"),
        ("sel", "塞"),
        ("vor", "沃"),
        ("zal", "扎"),
    ],
}
MEDIALS = [
    ("an", "安"),
    ("el", "埃"),
    ("is", "伊"),
    ("ul", "乌"),
    ("ven", "文"),
    ("zan", "赞"),
    ("rin", "林"),
    ("sol", "索"),
    ("vik", "维"),
    ("qar", "夸"),
    ("lan", "兰"),
    ("mir", "米"),
    ("dra", "卓"),
    ("wen", "温"),
    ("xar", "夏"),
    ("yel", "叶"),
    ("ros", "罗"),
    ("ten", "滕"),
    ("gal", "伽"),
    ("ith", "蒂"),
]
FINALS = [
    ("os", "斯"),
    ("ar", "尔"),
    ("un", "伦"),
    ("ia", "亚"),
    ("en", "恩"),
    ("ov", "夫"),
    ("ir", "瑞"),
    ("ath", "瑟"),
    ("ek", "克"),
    ("um", "姆"),
    ("ald", "奥"),
    ("ine", "琳"),
]

# --- attribute pools: (English, Chinese) ---------------------------------------------------------

REGIONS = [
    ("northern highlands", "北部高地"),
    ("eastern plains", "东部平原"),
    ("southern coast", "南部海岸"),
    ("western forests", "西部森林"),
    ("central valleys", "中部谷地"),
    ("lake district", "湖区"),
    ("river delta", "河口三角洲"),
    ("outer islands", "外海群岛"),
    ("desert basin", "沙漠盆地"),
    ("mountain plateau", "山地高原"),
]
CLIMATES = [("mild", "温和"), ("dry", "干燥"), ("cold", "寒冷"), ("humid", "潮湿"), ("windy", "多风")]
LANDMARKS = [
    ("salt museum", "盐博物馆"),
    ("old harbour", "老港口"),
    ("glass bridge", "玻璃桥"),
    ("clock tower", "钟楼"),
    ("spice market", "香料市场"),
    ("stone library", "石头图书馆"),
    ("botanical garden", "植物园"),
]
SECTORS = [
    ("farming", "农业"),
    ("mining", "采矿业"),
    ("fishing", "渔业"),
    ("tourism", "旅游业"),
    ("manufacturing", "制造业"),
    ("forestry", "林业"),
    ("shipping", "航运业"),
]
EXPORTS = [
    ("cotton", "棉花"),
    ("copper", "铜"),
    ("timber", "木材"),
    ("salt", "盐"),
    ("wool", "羊毛"),
    ("tea", "茶叶"),
    ("glass", "玻璃"),
    ("wine", "葡萄酒"),
    ("iron ore", "铁矿石"),
    ("dried fish", "鱼干"),
    ("rice", "大米"),
    ("marble", "大理石"),
    ("silk", "丝绸"),
    ("coffee", "咖啡"),
    ("barley", "大麦"),
    ("tin", "锡"),
    ("amber", "琥珀"),
    ("leather", "皮革"),
    ("paper", "纸张"),
    ("olive oil", "橄榄油"),
]
CURRENCY_UNITS = [("mark", "马克"), ("crown", "克朗"), ("florin", "弗罗林"), ("thaler", "塔勒")]
GOVERNMENTS = [
    # (type, leader's title) in English and Chinese
    ("republic", "president", "共和国", "总统"),
    ("constitutional monarchy", "prime minister", "君主立宪制国家", "首相"),
    ("federal republic", "chancellor", "联邦共和国", "总理"),
    ("parliamentary republic", "first minister", "议会制共和国", "首席部长"),
]
DIRECTIONS = [("north", "北"), ("south", "南"), ("east", "东"), ("west", "西")]

# --- document templates: (fact key or None, template) ------------------------------------------
# Fields: C country, cap capital, river, region, climate, landmark, N neighbour, dir, pop, sector,
# currency, export, year, founder, language, gov, title, Title, leader, birth, term.

DOCS: dict[str, dict[str, list[tuple[str | None, str]]]] = {
    "en": {
        "geography": [
            (None, "{C} is a country in the {region}."),
            ("capital", "The capital of {C} is {cap}."),
            ("river", "{cap} lies on the {river} River."),
            ("neighbour", "To the {dir}, {C} borders {N}."),
            (None, "The weather in {C} is mostly {climate}."),
            (None, "Visitors to {cap} often come to see its {landmark}."),
        ],
        "economy": [
            ("population", "About {pop} people live in {C}."),
            (None, "Many of them work in {sector}."),
            ("currency", "The currency of {C} is the {currency}."),
            ("export", "The main export of {C} is {export}."),
            (None, "Most trade passes through the ports and rail yards near the border."),
        ],
        "history": [
            ("founded", "{C} was founded in {year}."),
            ("founder", "The founder of {C} was {founder}."),
            ("language", "The official language of {C} is {language}."),
            (None, "The national day celebrates the signing of the first charter."),
        ],
        "government": [
            (None, "{C} is a {gov}."),
            ("leader", "{C} is led by {title} {leader}."),
            ("birth", "{Title} {leader} was born in {birth}."),
            (None, "Elections are held every {term} years."),
        ],
    },
    "zh": {
        "geography": [
            (None, "{C}是位于{region}的一个国家。"),
            ("capital", "{C}的首都是{cap}。"),
            ("river", "{cap}坐落在{river}河畔。"),
            ("neighbour", "{C}的{dir}面与{N}接壤。"),
            (None, "{C}的气候大多{climate}。"),
            (None, "到{cap}的游客常常去参观那里的{landmark}。"),
        ],
        "economy": [
            ("population", "{C}约有{pop}人口。"),
            (None, "其中很多人从事{sector}。"),
            ("currency", "{C}的货币是{currency}。"),
            ("export", "{C}的主要出口商品是{export}。"),
            (None, "大部分贸易经由边境附近的港口和铁路货场进行。"),
        ],
        "history": [
            ("founded", "{C}建立于{year}年。"),
            ("founder", "{C}的开国者是{founder}。"),
            ("language", "{C}的官方语言是{language}。"),
            (None, "国庆日纪念第一部宪章的签署。"),
        ],
        "government": [
            (None, "{C}是一个{gov}。"),
            ("leader", "{C}的领导人是{title}{leader}。"),
            ("birth", "{title}{leader}出生于{birth}年。"),
            (None, "选举每{term}年举行一次。"),
        ],
    },
}
TITLES = {
    "en": {
        "geography": "{C}: Geography",
        "economy": "{C}: Economy",
        "history": "{C}: History",
        "government": "{C}: Government",
    },
    "zh": {"geography": "{C}：地理", "economy": "{C}：经济", "history": "{C}：历史", "government": "{C}：政府"},
}

# relation -> (aspect of the document holding it, fact key)
RELATIONS = {
    "capital": "geography",
    "river": "geography",
    "population": "economy",
    "currency": "economy",
    "export": "economy",
    "founded": "history",
    "founder": "history",
    "language": "history",
    "leader": "government",
    "birth": "government",
}
QUESTIONS: dict[str, dict[str, dict[str, str]]] = {
    "en": {
        "direct": {
            "capital": "What is the capital of {C}?",
            "river": "Which river does {cap} lie on?",
            "population": "How many people live in {C}?",
            "currency": "What is the currency of {C}?",
            "export": "What is the main export of {C}?",
            "founded": "In which year was {C} founded?",
            "founder": "Who was the founder of {C}?",
            "language": "What is the official language of {C}?",
            "leader": "Who is {C} led by?",
            "birth": "In which year was {leader} born?",
        },
        "paraphrase": {
            "capital": "Where does the government of {C} sit?",
            "river": "What waterway flows through {cap}?",
            "population": "How many inhabitants does {C} have?",
            "currency": "What money do shoppers in {C} pay with?",
            "export": "What does {C} sell abroad more than anything else?",
            "founded": "When did {C} come into being?",
            "founder": "Who established {C}?",
            "language": "What tongue do people in {C} speak?",
            "leader": "Who is in charge of {C}?",
            "birth": "What year did {leader} come into the world?",
        },
        "multihop": {
            "capital_currency": "What is the currency of the country whose capital is {cap}?",
            "capital_leader": "Who leads the country whose capital is {cap}?",
            "neighbour_founded": "In which year was the country that borders {C} to the {dir} founded?",
            "leader_export": "What is the main export of the country led by {leader}?",
        },
        "arithmetic": {
            "founding_gap": "How many years passed between the founding of {A} and the founding of {B}?",
            "population_sum": "What is the combined population of {A} and {B}?",
            "age_gap": "How many years older is the leader of {A} than the leader of {B}?",
        },
    },
    "zh": {
        "direct": {
            "capital": "{C}的首都是哪里？",
            "river": "{cap}坐落在哪条河畔？",
            "population": "{C}有多少人口？",
            "currency": "{C}的货币是什么？",
            "export": "{C}的主要出口商品是什么？",
            "founded": "{C}建立于哪一年？",
            "founder": "{C}的开国者是谁？",
            "language": "{C}的官方语言是什么？",
            "leader": "{C}的领导人是谁？",
            "birth": "{leader}出生于哪一年？",
        },
        "paraphrase": {
            "capital": "{C}的政府设在哪座城市？",
            "river": "流经{cap}的是哪条河？",
            "population": "{C}住着多少居民？",
            "currency": "在{C}买东西用什么钱？",
            "export": "{C}卖到国外最多的是什么？",
            "founded": "{C}是哪一年立国的？",
            "founder": "是谁创立了{C}？",
            "language": "{C}的人们讲什么话？",
            "leader": "现在是谁在掌管{C}？",
            "birth": "{leader}是哪一年降生的？",
        },
        "multihop": {
            "capital_currency": "首都是{cap}的那个国家使用什么货币？",
            "capital_leader": "首都是{cap}的国家由谁领导？",
            "neighbour_founded": "在{C}{dir}面与之接壤的国家建立于哪一年？",
            "leader_export": "{leader}领导的国家主要出口什么？",
        },
        "arithmetic": {
            "founding_gap": "{A}和{B}的建国时间相差多少年？",
            "population_sum": "{A}和{B}的人口加起来一共有多少？",
            "age_gap": "{A}的领导人比{B}的领导人年长几岁？",
        },
    },
}


@dataclass(slots=True)
class CountriesCorpus(Corpus):
    """A countries world in one language. ``entities`` lists its names by kind."""

    language: str = "en"
    world: str = "eval"
    entities: dict[str, list[str]] = field(default_factory=dict)


def build_countries(seed: int = DEFAULT_SEED, language: str = "en", n_countries: int = 40) -> CountriesCorpus:
    """Generate the countries world of ``seed``, rendered in ``language`` ("en" or "zh")."""
    if language not in LANGUAGES:
        raise ConfigError(f"unknown language {language!r} for the countries corpus: use one of {LANGUAGES}")
    if not 2 <= n_countries <= 300:
        raise ConfigError(f"n_countries must be between 2 and 300, got {n_countries}")
    half = "eval" if seed == DEFAULT_SEED else "train"
    countries = _world(seed, half, n_countries)
    documents, facts = _documents(countries, language)
    questions = _questions(countries, facts, language, random.Random(f"countries:{seed}:questions"))
    lang = 0 if language == "en" else 1
    entities = {
        kind: sorted({c[kind][lang] for c in countries})
        for kind in ("name", "capital", "river", "currency", "language", "leader", "founder")
    }
    return CountriesCorpus(
        name=f"countries-{language}" if half == "eval" else f"countries-train-{seed}-{language}",
        seed=seed,
        documents=documents,
        questions=questions,
        facts=[fact for by_key in facts.values() for fact in by_key.values()],
        language=language,
        world=half,
        entities=entities,
    )


# --- the world ----------------------------------------------------------------------------------


class _Namer:
    """Draws unique words; no word's Latin spelling contains another's, so answers do not nest."""

    def __init__(self, rng: random.Random, half: str) -> None:
        self.rng = rng
        self.initials = INITIALS[half]
        self.words: set[str] = set()
        self.substrings: set[str] = set()

    def word(self, syllables: int = 3) -> tuple[str, str]:
        for _ in range(1000):
            parts = [self.rng.choice(self.initials)]
            if syllables == 3:
                parts.append(self.rng.choice(MEDIALS))
            parts.append(self.rng.choice(FINALS))
            latin = "".join(p[0] for p in parts)
            subs = {latin[i:j] for i in range(len(latin)) for j in range(i + 1, len(latin) + 1)}
            if latin in self.substrings or subs & self.words:
                continue
            self.words.add(latin)
            self.substrings |= subs
            return latin.capitalize(), "".join(p[1] for p in parts)
        raise ConfigError("ran out of unique names: ask for fewer countries")

    def person(self, given: list[tuple[str, str]]) -> tuple[str, str]:
        first, family = self.rng.choice(given), self.word()
        return f"{first[0]} {family[0]}", f"{first[1]}·{family[1]}"


def _world(seed: int, half: str, n: int) -> list[dict[str, Any]]:
    """The countries of a world; each attribute that is text is an (English, Chinese) pair."""
    rng = random.Random(f"countries:{seed}:world")
    namer = _Namer(rng, half)
    given = [namer.word(2) for _ in range(30)]
    countries: list[dict[str, Any]] = []
    for _ in range(n):
        government = rng.choice(GOVERNMENTS)
        currency_stem, unit = namer.word(), rng.choice(CURRENCY_UNITS)
        language = namer.word()
        countries.append(
            {
                "name": namer.word(),
                "capital": namer.word(),
                "river": namer.word(),
                "region": rng.choice(REGIONS),
                "climate": rng.choice(CLIMATES),
                "landmark": rng.choice(LANDMARKS),
                "direction": rng.choice(DIRECTIONS),
                "population": rng.randrange(2, 150),
                "sector": rng.choice(SECTORS),
                "currency": (f"{currency_stem[0]} {unit[0]}", f"{currency_stem[1]}{unit[1]}"),
                "export": rng.choice(EXPORTS),
                "founded": rng.randrange(1600, 1961),
                "founder": namer.person(given),
                "language": (language[0], f"{language[1]}语"),
                "government": (government[0], government[2]),
                "title": (government[1], government[3]),
                "leader": namer.person(given),
                "birth": rng.randrange(1940, 1986),
                "term": rng.choice([4, 5, 6]),
            }
        )
    for i, country in enumerate(countries):
        country["neighbour"] = rng.choice([j for j in range(n) if j != i])
    return countries


def _fields(countries: list[dict[str, Any]], i: int, lang: int) -> dict[str, Any]:
    c = countries[i]
    title = c["title"][lang]
    return {
        "C": c["name"][lang],
        "cap": c["capital"][lang],
        "river": c["river"][lang],
        "region": c["region"][lang],
        "climate": c["climate"][lang],
        "landmark": c["landmark"][lang],
        "N": countries[c["neighbour"]]["name"][lang],
        "dir": c["direction"][lang],
        "pop": f"{c['population']} million" if lang == 0 else f"{c['population'] * 100}万",
        "sector": c["sector"][lang],
        "currency": c["currency"][lang],
        "export": c["export"][lang],
        "year": c["founded"],
        "founder": c["founder"][lang],
        "language": c["language"][lang],
        "gov": c["government"][lang],
        "title": title,
        "Title": title[:1].upper() + title[1:],
        "leader": c["leader"][lang],
        "birth": c["birth"],
        "term": c["term"],
    }


# The answer span of each fact, from the fields.
_FACT_VALUES = {
    "capital": "cap",
    "river": "river",
    "neighbour": "N",
    "population": "pop",
    "currency": "currency",
    "export": "export",
    "founded": "year",
    "founder": "founder",
    "language": "language",
    "leader": "leader",
    "birth": "birth",
}


def _documents(
    countries: list[dict[str, Any]], language: str
) -> tuple[list[Document], dict[tuple[int, str], dict[str, Fact]]]:
    lang = LANGUAGES.index(language)
    joiner = " " if language == "en" else ""
    documents: list[Document] = []
    facts: dict[tuple[int, str], dict[str, Fact]] = {}
    for i in range(len(countries)):
        values = _fields(countries, i, lang)
        for aspect in ASPECTS:
            doc_id = f"country-{i + 1:03d}-{aspect}"
            sentences, doc_facts = [], {}
            for key, template in DOCS[language][aspect]:
                sentence = template.format_map(values)
                sentences.append(sentence)
                if key is not None:
                    value = str(values[_FACT_VALUES[key]])
                    doc_facts[key] = Fact(doc_id, sentence, f"{doc_id}#{key}", value)
            title = TITLES[language][aspect].format_map(values)
            text = f"# {title}\n\n{joiner.join(sentences)}\n"
            metadata = {"doc_type": aspect, "country": values["C"], "language": language, "acl": ["all"], "version": 1}
            documents.append(Document(doc_id, text, title, metadata, source=f"{doc_id}.md"))
            facts[(i, aspect)] = doc_facts
    return documents, facts


# --- questions ----------------------------------------------------------------------------------


def _questions(
    countries: list[dict[str, Any]],
    facts: dict[tuple[int, str], dict[str, Fact]],
    language: str,
    rng: random.Random,
) -> list[Question]:
    lang = LANGUAGES.index(language)
    templates = QUESTIONS[language]
    relations = list(RELATIONS)
    hops = list(templates["multihop"])
    sums = list(templates["arithmetic"])
    n = len(countries)
    drafts: list[tuple[str, str, list[Fact], str | None, list[str], str | None]] = []

    def fact(i: int, relation: str) -> Fact:
        aspect = "geography" if relation == "neighbour" else RELATIONS[relation]
        return facts[(i, aspect)][relation]

    for i in range(n):
        values = _fields(countries, i, lang)
        for qtype, relation in (("direct", relations[i % 10]), ("paraphrase", relations[(3 * i + 1) % 10])):
            drafts.append(
                (
                    qtype,
                    templates[qtype][relation].format_map(values),
                    [fact(i, relation)],
                    None,
                    _aliases(relation, fact(i, relation).value, language),
                    None,
                )
            )
    for i in range(n):
        values = _fields(countries, i, lang)
        kind = hops[i % len(hops)]
        first, second = {
            "capital_currency": (fact(i, "capital"), fact(i, "currency")),
            "capital_leader": (fact(i, "capital"), fact(i, "leader")),
            "neighbour_founded": (fact(i, "neighbour"), fact(countries[i]["neighbour"], "founded")),
            "leader_export": (fact(i, "leader"), fact(i, "export")),
        }[kind]
        bridge = values["N"] if kind == "neighbour_founded" else values["C"]
        relation = kind.split("_")[1]
        drafts.append(
            (
                "multihop",
                templates["multihop"][kind].format_map(values),
                [first, second],
                None,
                _aliases(relation, second.value, language),
                bridge,
            )
        )
    for i in range(n):
        kind = sums[i % len(sums)]
        a = countries[i]
        j = rng.choice([k for k in range(n) if k != i and _differ(kind, a, countries[k])])
        b = countries[j]
        if kind == "age_gap" and a["birth"] > b["birth"]:
            i, j, a, b = j, i, b, a  # ask how much older the older leader is
        names = {"A": a["name"][lang], "B": b["name"][lang]}
        if kind == "founding_gap":
            number = abs(a["founded"] - b["founded"])
            answer, evidence = str(number), [fact(i, "founded"), fact(j, "founded")]
            aliases = [f"{number} years" if lang == 0 else f"{number}年"]
        elif kind == "population_sum":
            total = a["population"] + b["population"]
            answer = f"{total} million" if lang == 0 else f"{total * 100}万"
            evidence, aliases = [fact(i, "population"), fact(j, "population")], []
        else:
            number = b["birth"] - a["birth"]
            answer = str(number)
            evidence = [fact(i, "leader"), fact(i, "birth"), fact(j, "leader"), fact(j, "birth")]
            aliases = [f"{number} years" if lang == 0 else f"{number}岁"]
        drafts.append(("arithmetic", templates["arithmetic"][kind].format_map(names), evidence, answer, aliases, None))

    counters: dict[str, int] = {}
    questions = []
    for qtype, text, evidence, answer, aliases, bridge in drafts:
        counters[qtype] = counters.get(qtype, 0) + 1
        questions.append(
            Question(
                id=f"{qtype}-{counters[qtype]:03d}",
                text=text,
                type=qtype,
                answer=evidence[-1].value if answer is None else answer,
                aliases=aliases,
                gold_doc_ids=list(dict.fromkeys(f.doc_id for f in evidence)),
                evidence=[(f.doc_id, f.sentence) for f in evidence],
                bridge=bridge,
            )
        )
    return questions


def _differ(kind: str, a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Arithmetic pairs need different numbers, so the answer is never zero."""
    key = {"founding_gap": "founded", "population_sum": "population", "age_gap": "birth"}[kind]
    return kind == "population_sum" or a[key] != b[key]


def _aliases(relation: str, value: str, language: str) -> list[str]:
    if relation == "river":
        return [f"the {value} River" if language == "en" else f"{value}河"]
    if relation in ("founded", "birth") and language == "zh":
        return [f"{value}年"]
    return []
