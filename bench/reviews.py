"""Synthetic held-out product reviews (English + Chinese) for checking that a model learned sentiment.

Why it exists: ``studio/assets/sample_reviews.csv`` is the demo training data. Accuracy measured on the same sentences
only shows memorisation, so this module writes a *different* review set: other shops (kitchen, outdoor, pets, kids,
furniture, gadgets, takeaway dishes, guesthouses, personal care, games and workbooks), its own phrase pools and its
own sentence structures. The data is SYNTHETIC: every review is assembled from hand-written clause pools below.

How a review is built (one label first, then text that carries it):

- ``plain`` (~55%): optional opener ("Got the drone on sale.") + 1-3 clauses of the label's polarity + optional verdict
  with an intensifier ("Honestly, worth every penny!").
- ``mild`` (~8%): one clause and a lukewarm-but-leaning verdict ("decent for what it is", "一般般，有点失望").
- ``negation`` (~14%): the decisive phrase is negated and its keyword points the *other* way ("the build is not bad
  at all", "质量一点也不差", "I can't say the finish impressed me", "没有想象中好").
- ``contrast`` (~13%): "A, but B" / "虽然A，但是B" where A is a minor opposite remark and the label follows B,
  the final clause ("The box was dented, but it heats evenly" -> positive).
- ``mixed`` (~10%): pros and cons of the product itself; the closing conclusion decides.

So roughly a third of the rows need more than one keyword. About 4% carry a typo (swapped/dropped letters, homophone
slips like 的/得, missing full stop) as real reviews do. Labels are exactly balanced per language, texts are unique
where the pools allow, and everything comes from ``random.Random(seed)``: the same arguments give the same rows.

Usage: ``python bench/reviews.py --n 3000 --seed 7 --lang mix --out heldout.csv`` (columns text,label,lang).
"""
from __future__ import annotations

import argparse
import csv
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Lang = Literal["mix", "en", "zh"]
KINDS = ("plain", "mild", "negation", "contrast", "mixed")
KIND_WEIGHTS = (55, 8, 14, 13, 10)
TYPO_RATE = 0.04
# Matches what `python -m studio convert --task sentiment` writes for English positive/negative labels.
SENTIMENT_INSTRUCTION = "Classify the sentiment of this text as positive or negative."


def _s(text: str) -> list[str]:
    """Pools are written as '|'-separated strings so a category fits in a few lines."""
    return [t.strip() for t in text.split("|") if t.strip()]


# ---------------------------------------------------------------- English pools
# Per category: openers ({p} = product), category-wide clauses, and per-product clauses (positive, negative), so a
# review never praises a yoga mat for lighting up the trail. Clauses are lowercase without a full stop; a leading
# "it"/"it's" becomes the product name when the clause opens the review.
@dataclass(frozen=True)
class Category:
    """One shop section: openers, clauses true of any of its products, and clauses for each product."""
    openers: list[str]
    general: tuple[list[str], list[str]]  # (positive, negative)
    items: dict[str, tuple[list[str], list[str]]]
    measure: str  # Chinese measure word for "this <product>"
    shop: str  # goods / food / stay: picks the pool of minor side remarks that fit

    def clauses(self, rng: random.Random, product: str, positive: bool, k: int) -> list[str]:
        """k distinct clauses of one polarity; the first is about this very product so reviews stay specific."""
        side = 0 if positive else 1
        own, general = self.items[product][side], self.general[side]
        first = rng.choice(own)
        rest = [c for c in own + general if c != first]
        return [first] + rng.sample(rest, min(k - 1, len(rest)))


    def aside(self, rng: random.Random, minor: dict[str, tuple[list[str], list[str]]], positive: bool) -> str:
        """A remark of the given polarity that does not contradict the product clauses (mixed reviews)."""
        side = 0 if positive else 1
        return rng.choice(self.general[side] + minor[self.shop][side])


def _cat(o: str, gen: tuple[str, str], items: dict[str, tuple[str, str]], m: str = "", shop: str = "goods"
         ) -> Category:
    return Category(_s(o), (_s(gen[0]), _s(gen[1])), {k: (_s(v[0]), _s(v[1])) for k, v in items.items()}, m, shop)


EN: dict[str, Category] = {
    "kitchen": _cat(
        "Bought the {p} to replace my old one.|Got this {p} as a housewarming gift.|Been cooking with the {p} for "
        "three weeks.",
        ("cleanup takes under a minute|it feels solid and well made|it looks great on the counter",
         "it feels cheap and flimsy|it arrived with a deep scratch on the side|cleaning it is a nightmare"),
        {"non-stick frying pan": ("nothing sticks to it, not even eggs|it heats evenly across the whole surface",
                                  "the coating started peeling after a few uses|the bottom warped within a week"),
         "chef's knife": ("the blade is still razor sharp after a month|it feels balanced in the hand",
                          "it went dull within two weeks|the handle is loose and wiggles"),
         "stand mixer": ("it kneads bread dough without straining|it stays put even at full speed",
                         "it rattles across the counter at high speed|the motor smells like it's burning"),
         "espresso grinder": ("the grind is consistent and the motor is quiet|my morning shots have never tasted "
                              "better", "the grind is uneven no matter the setting|it clogs every few days"),
         "set of storage jars": ("the lids seal tight and nothing leaks|my pantry finally looks organised",
                                 "the lids crack if you press them too hard|the seals don't keep anything fresh"),
         "waffle maker": ("it made perfect waffles on the first try|the waffles come out crisp and golden",
                          "batter oozes out the sides every time|one side burns while the other stays pale")}),
    "outdoor": _cat(
        "Took the {p} on a weekend trip.|Bought this {p} before a long hike.|Been using the {p} for two months.",
        ("it's light enough to carry all day|it feels tough enough for years of use|it's great value compared to "
         "the outdoor shops", "it's much heavier than the listing claims|the stitching is already fraying|it smells "
         "like burnt rubber"),
        {"camping tent": ("it kept us dry through a night of heavy rain|it goes up in ten minutes, even alone",
                          "the poles bent in the first gust of wind|water dripped through the seams all night"),
         "yoga mat": ("the grip holds even in a sweaty hot yoga class|it's thick enough to protect my knees",
                      "it slides around on the floor during every pose|it tore at the edge after a week"),
         "pair of hiking boots": ("my feet stayed dry on a muddy ten-mile hike|there were no blisters even on day "
                                  "one", "the sole started coming off after two hikes|they rub my heels raw"),
         "insulated water bottle": ("ice water stays cold for a whole day|it doesn't leak even upside down in my "
                                    "bag", "the lid leaks all over my bag|coffee goes lukewarm in an hour"),
         "bike light": ("it's bright enough to light up the whole trail|one charge lasts a week of commuting",
                        "the battery dies after forty minutes|the mount snapped on the first bumpy road"),
         "sleeping bag": ("it kept me warm at near-freezing temperatures|it packs down smaller than I expected",
                          "I was freezing at ten degrees|the zipper keeps catching on the fabric")}),
    "pets": _cat(
        "Got the {p} for our rescue.|Our pets have had the {p} for a month.|Ordered this {p} after the vet "
        "suggested it.",
        ("our pets took to it right away|it was cheaper than at the pet store|it's well made and easy to clean",
         "our pets completely ignore it|it fell apart within days|it smells strongly of chemicals"),
        {"cat litter": ("it clumps well and keeps the smell down|there's barely any dust when I pour it",
                        "the dust gets everywhere and tracks all over the house|the whole flat smells by day two"),
         "dog harness": ("my dog can't wriggle out of it anymore|it doesn't rub under his legs",
                         "the buckle snapped on our second walk|it chafed my dog's armpits"),
         "cat tree": ("both cats fight over the top perch|it's tall and doesn't wobble at all",
                      "it wobbles so much my cat refuses to climb it|the sisal rope unravelled in a week"),
         "automatic pet feeder": ("it dispenses on schedule without fail|the app makes portions easy to set",
                                  "it jammed and skipped breakfast twice|the app disconnects constantly"),
         "chew toy": ("it survived a month with my heavy chewer|my dog carries it everywhere",
                      "my puppy tore it to shreds in ten minutes|bits broke off and I worry he'll swallow them"),
         "pet bed": ("my old dog sleeps on it every night|the cover washes well and dries quickly",
                     "the stuffing went flat within days|the cover shrank in the wash")}),
    "kids": _cat(
        "Bought the {p} for my son's birthday.|Our toddler has used the {p} daily since spring.|Got this {p} for "
        "my niece.",
        ("it has kept the kids busy for hours|it feels safe and solidly made|even grandma was impressed",
         "the kids lost interest after a day|it feels cheap and has sharp edges|parts came loose within a week"),
        {"building block set": ("the pieces click together firmly|it works with the big-brand bricks too",
                                "several pieces were missing from the box|the bricks don't hold together"),
         "stroller": ("it folds with one hand, which is a lifesaver|it steers smoothly even on uneven pavement",
                      "the wheels lock up randomly|the brake barely works"),
         "kids' scooter": ("my son rides it to school every day|the height adjusts as he grows",
                           "the handlebar wobbles and feels unsafe|a wheel cracked within a month"),
         "baby monitor": ("the night vision picture is clear|it alerts me the moment the baby stirs",
                          "the signal drops whenever I go downstairs|the audio hisses all night"),
         "jigsaw puzzle": ("the pieces fit snugly and the image is crisp|it was the perfect rainy weekend project",
                           "half the pieces don't fit together|the picture is blurry and the pieces peel"),
         "wooden train set": ("the edges are smooth and the paint is non-toxic|the tracks connect easily for "
                              "little hands", "the paint chips off easily|the tracks don't line up")}),
    "home": _cat(
        "Assembled the {p} last weekend.|I work from home, so I use the {p} all day.|Bought the {p} for our new "
        "flat.",
        ("it was easy to assemble and feels very sturdy|it fits perfectly in the corner of my room|it looks more "
         "expensive than it was", "it has a chemical smell that won't go away|the pre-drilled holes didn't line "
         "up|it arrived with a cracked panel"),
        {"office chair": ("my back pain has eased since I switched to it|the armrests adjust in every direction",
                          "the seat cushion went flat in a month|it creaks every time I move"),
         "desk lamp": ("the light is soft and doesn't flicker|the arm stays exactly where I put it",
                       "the lamp flickers constantly|the arm droops after a few minutes"),
         "bookshelf": ("it holds a load of hardcovers without bending|the shelves are easy to adjust",
                       "the shelves sag under a few paperbacks|one side is shorter so it leans"),
         "set of blackout curtains": ("the room is pitch dark even at noon|they keep the bedroom noticeably cooler",
                                      "light still leaks through the fabric|they're much shorter than the listed "
                                      "size"),
         "mattress topper": ("it turned my hard mattress into something I look forward to|it doesn't trap heat "
                             "at night", "it went flat within weeks|it sleeps hot and smells of foam"),
         "standing desk": ("the motor is smooth and whisper quiet|it's rock steady even at full height",
                           "it wobbles at standing height|the motor stopped working after a month")}),
    "gadgets": _cat(
        "Got the {p} on sale.|I've had this {p} for about six weeks.|Bought the {p} mainly for work.",
        ("setup in the app took two minutes|it connected to my home network on the first try|it feels well built "
         "for the price", "it randomly switches itself off|the app is full of bugs|customer support never "
         "replied"),
        {"e-reader": ("the screen is easy on the eyes for hours of reading|the battery lasts for weeks",
                      "the screen freezes when I turn pages|the battery drains overnight"),
         "webcam": ("the video is crisp and the mic picks up my voice clearly|it copes well with my dim office",
                    "the image is grainy in anything but bright light|the mic makes me sound underwater"),
         "drone": ("it hovers steadily even in light wind|the footage is smooth and sharp",
                   "it drifted and crashed into a tree on the first flight|the video feed keeps cutting out"),
         "mini projector": ("the picture is bright enough for movie night on a white wall|the built-in speaker is "
                            "surprisingly good", "the picture is washed out unless the room is completely dark|"
                            "the fan is louder than the movie"),
         "computer monitor": ("the colors are accurate right out of the box|text looks sharp and there's no "
                              "flicker", "there's obvious backlight bleed in the corners|it arrived with two dead "
                              "pixels"),
         "dashcam": ("it records clearly even at night|the footage helped me with an insurance claim",
                     "the footage is blurry and the date stamp is wrong|it overheats on sunny days")}),
    "takeaway": _cat(
        "Ordered the {p} for lunch at the office.|Got the {p} delivered on a Friday night.|Tried the {p} from this "
        "place for the first time.",
        ("everything was packed neatly in separate boxes|it arrived twenty minutes earlier than estimated|the "
         "portion easily fed two people", "it was lukewarm by the time it arrived|the bag was torn and greasy|"
         "they forgot the sauce I paid extra for"),
        {"pad thai": ("the noodles had that smoky wok flavor|the peanuts and lime came packed on the side",
                      "the noodles were a soggy, sugary mess|it tasted of nothing but ketchup"),
         "poke bowl": ("the fish tasted really fresh|the rice was perfectly seasoned",
                       "the fish smelled off|the rice was hard and undercooked"),
         "fried chicken": ("the chicken was crunchy outside and juicy inside|the spicy glaze was addictive",
                           "the chicken was dry and the batter was greasy|half the pieces were mostly bone"),
         "falafel wrap": ("the falafel was crisp and the tahini was generous|the vegetables were crisp and "
                          "colourful", "the falafel was dense and dry|the wrap fell apart before I could eat it"),
         "wonton soup": ("the broth was rich and the wontons were plump|it tasted just like my grandmother's",
                         "the broth tasted like salt water|there were only four sad wontons"),
         "taco set": ("the tortillas were warm and soft|the salsa had a real kick",
                      "there was barely any filling|the tortillas were stale and cracked")}, shop="food"),
    "stays": _cat(
        "We spent four nights at this {p}.|Stayed at the {p} for a work trip.|Booked the {p} for our honeymoon.",
        ("the beds were comfortable and the sheets smelled fresh|it was quiet enough to sleep with the windows "
         "open|the shower had strong, hot water|check-in was smooth even though we arrived after midnight|it's a "
         "short walk to the old town", "the bathroom had mold in the corners|the walls were so thin we heard "
         "every word next door|there was no hot water two mornings in a row|the sheets had stains on them|we "
         "found bugs in the bed|the wifi barely worked"),
        {"guesthouse": ("the host gave us great local tips", "the host didn't answer when we got locked out"),
         "hostel": ("the lockers were big and the common room was lively",
                    "the dorm was dirty and the lockers didn't lock"),
         "beach resort": ("the view from the balcony was stunning", "the pool in the photos was closed for "
                          "repairs"),
         "serviced apartment": ("the kitchen had everything we needed",
                                "the kitchen had no pots and the fridge didn't work"),
         "mountain lodge": ("the fireplace and the trails right outside made the trip",
                            "the heating barely worked and the room was freezing")}, shop="stay"),
    "care": _cat(
        "I've used the {p} every day for a month.|My sister recommended this {p}.|Picked up the {p} while "
        "travelling.",
        ("it's become part of my daily routine|it works better than the pricey brand I used before|it's worth "
         "every cent", "I stopped using it after a week|it's worse than the cheap brand I used before|what "
         "arrived looks nothing like the photos"),
        {"shampoo": ("my hair feels soft and much less frizzy|my scalp stopped itching",
                     "it left my scalp itchy and flaky|my hair felt like straw afterwards"),
         "nail polish": ("it lasted a week without chipping|two coats give a perfect glossy finish",
                         "it chipped the very next day|it's streaky even after three coats"),
         "lip balm": ("my lips stay soft all day|it isn't sticky and has a light tint",
                      "it made my lips even drier|it melts in my pocket"),
         "body lotion": ("it absorbs fast and doesn't feel sticky|my dry elbows are finally smooth",
                         "it feels sticky long after I apply it|the smell is overpowering"),
         "electric toothbrush": ("my teeth feel dentist-clean|one charge lasts three weeks",
                                 "the battery died after a week|it buzzes so hard it numbs my gums"),
         "hair straightener": ("it straightens my thick hair in one pass|it heats up in under a minute",
                               "it pulls and snags my hair|it smells burnt every time I use it")}),
    "games": _cat(
        "Bought the {p} as a gift for my brother.|Picked up this {p} after seeing it online.|Been working through "
        "the {p} for a month.",
        ("it's well printed on thick paper|it's great value for the hours of fun|you can tell a lot of care went "
         "into it", "it's far too basic for what they charge|the print is faint and hard to read|it arrived with "
         "a torn cover"),
        {"cookbook": ("the recipes actually work and use ingredients I can find|the photos make everything look "
                      "doable", "half the recipes failed when I tried them|the measurements are all over the "
                      "place"),
         "board game": ("game night has never been this fun|the rules are simple but there's real depth",
                        "the rules are confusing and contradict each other|the cards bent after one game"),
         "graphic novel": ("the artwork is gorgeous and the story is clever|I read it twice in a row",
                           "the story is shallow and ends abruptly|the art looks rushed"),
         "language workbook": ("the exercises build up in a logical order|the audio files are clear and useful",
                               "the answer key is full of mistakes|it's padded with filler"),
         "crossword book": ("the puzzles are challenging without being frustrating|the binding lies flat, which "
                            "is handy", "the clues are full of typos|the puzzles are either trivial or "
                            "impossible")}),
}
# Minor side remarks (shipping, price, looks): the first half of "A, but B" contrasts, where B decides.
EN_MINOR: dict[str, tuple[list[str], list[str]]] = {
    "goods": (_s("it looks nice|shipping was quick|the packaging was lovely|the price was low|the seller was polite|"
                 "the color is pretty|it looks great in the photos|setup was easy"),
              _s("shipping took longer than promised|the box was a bit dented|it's on the pricey side|the manual is "
                 "useless|the color is slightly off from the photo|it took a while to figure out|there's way too "
                 "much packaging|it's a little heavier than I'd like")),
    "food": (_s("the rider was friendly|the packaging looked neat|it was cheap with the app discount|the menu photos "
                "looked great|they included extra napkins"),
             _s("the rider couldn't find my building|delivery took almost an hour|it's pricier than eating in|the "
                "containers were a bit flimsy|they forgot the chopsticks")),
    "stay": (_s("the location looked perfect on the map|the price was reasonable|the front desk was polite|the "
                "photos online looked lovely|booking was easy"),
             _s("it's a bit far from the station|parking costs extra|check-in took a while|it's pricier than "
                "places nearby|the lift was slow")),
}
# Verdicts: (positive, negative) per shop type, plus ones that fit anywhere.
EN_VERDICT: dict[str, tuple[list[str], list[str]]] = {
    "any": (_s("worth every penny|five stars from me|thumbs up|happy customer here|recommended without hesitation|"
               "great value"), _s("one star|avoid this one|save your money|never again|what a letdown|total "
                                   "disappointment")),
    "goods": (_s("I'm keeping it|would buy again|my new favourite|I'd buy it again tomorrow"),
              _s("sending it back|I'm returning it|I asked for a refund|I regret this purchase")),
    "food": (_s("will order again|my new go-to lunch spot"), _s("won't order from them again|I asked for a refund")),
    "stay": (_s("we'd happily stay again|already planning our next visit"),
             _s("we won't be back|I'd book somewhere else next time")),
}
EN_MILD_POS = _s("decent for what it is|does the job for the price|pretty good overall|fine for occasional use|"
                 "good enough for me")
EN_MILD_NEG = _s("a bit underwhelming|meh, kind of a letdown|just okay, and not worth the price|mediocre at best|"
                 "I expected more")
EN_ATTRS = _s("quality|build|material|finish|performance|overall experience")
EN_NEGATED_POS = _s("the {a} is not bad at all|I have nothing bad to say about the {a}|the {a} is no worse than the "
                    "big brands|I can't fault the {a}|the {a} never disappointed me|no complaints so far|not a single "
                    "problem in three months|I don't regret it one bit|it never lets me down|can't find a flaw")
EN_NEGATED_NEG = _s("the {a} isn't great|the {a} is not as good as advertised|I can't say the {a} impressed me|the "
                    "{a} is nothing special|I wouldn't call the {a} good|not worth the money|I'm not impressed|it "
                    "doesn't live up to the hype|I can't recommend it|not something I'd buy twice")
EN_INTENS = _s("Honestly,|Seriously,|Really,|Totally|Absolutely")
EN_BUT = ("{a}, but {b}", "{A}. That said, {b}", "Even though {a}, {b}", "{A}. Still, {b}", "{A}, however {b}")
EN_GENERIC_OPEN = _s("Quick review.|Honest review:|Update after two weeks:|Long-time customer here.")
EN_WHO = _s("wife|husband|dad|mum|roommate|teenage son|grandmother")

# ---------------------------------------------------------------- Chinese pools
# m = measure word used when the product opens the review (这款/这家/这本).
ZH: dict[str, Category] = {
    "kitchen": _cat(
        "{p}用了三个星期了。|朋友乔迁送的{p}。|换掉了用了好多年的旧{p}。",
        ("清洗起来特别方便|拿在手里很有分量，做工扎实|放在厨房里很好看", "做工很粗糙，感觉很廉价|收到的时候侧面有一道划痕|特别难清洗"),
        {"不粘锅": ("煎蛋完全不粘|受热很均匀", "涂层没用几次就掉了|锅底用几天就变形了"),
         "菜刀": ("刀很锋利，切肉很轻松|握着很顺手", "刀刃一个月就钝了|洗一次就生锈了"),
         "破壁机": ("打豆浆特别细腻，没有渣|声音比想象中小", "转起来整个台面都在震|一开机就有烧焦的味道"),
         "咖啡机": ("做出来的咖啡油脂很丰富|一键出咖啡，早上很省事", "做出来的咖啡又淡又酸|用了一个月就漏水了"),
         "保鲜盒": ("密封性很好，放冰箱不串味|可以直接进微波炉，很方便", "盖子一按就裂了|密封不严，汤汁都漏出来了"),
         "电煮锅": ("煮面煮粥都很快|一个人用大小刚好", "把手烫得根本没法握|煮一会儿就跳闸")}, m="这款"),
    "outdoor": _cat(
        "周末去露营带了{p}。|出去玩之前买的{p}。|{p}用了快两个月了。",
        ("很轻，背一天也不累|做工结实，感觉能用很多年|比户外店便宜多了", "比页面上写的重多了|线头很多，有的地方已经开线了|有一股很重的橡胶味"),
        {"帐篷": ("下了一夜大雨里面一点没漏|一个人十分钟就能搭好", "风一大支架就弯了|接缝处一直在渗水"),
         "瑜伽垫": ("出汗了也不打滑|厚度合适，跪着膝盖不疼", "做动作的时候老是滑|用了一周边上就破了"),
         "登山鞋": ("走了一天山路脚也不累|踩进水坑里面也没湿", "爬了两次山鞋底就开胶了|磨脚后跟，走一会儿就起泡"),
         "保温杯": ("早上装的热水晚上还是烫的|倒过来放包里也不漏", "盖子拧不紧，水洒了一包|热水一个小时就凉了"),
         "自行车灯": ("夜骑照得很远|充一次电能骑一个星期", "充满电只能亮半个小时|一过减速带支架就断了"),
         "睡袋": ("零下几度睡着也暖和|收起来很小，背着不占地方", "十度的天气都冻得睡不着|拉链老是卡住")}, m="这款"),
    "pets": _cat(
        "给家里的毛孩子买的{p}。|{p}用了一个月了。|宠物医生推荐的{p}。",
        ("毛孩子一下子就接受了|比宠物店便宜不少|做工不错，也好清理", "毛孩子根本不理|没几天就散架了|味道很刺鼻"),
        {"猫砂": ("结团很快，除臭效果也好|粉尘很少，铲起来很干净", "粉尘特别大，家里到处都是|第二天屋里就全是味道"),
         "狗狗牵引绳": ("狗狗再也挣脱不了了|背带很软，不磨腋下", "卡扣遛了两次就断了|把狗狗腋下都磨红了"),
         "猫爬架": ("两只猫抢着在上面睡|很高也很稳，一点都不晃", "晃得厉害，猫根本不敢上去|麻绳一个星期就散了"),
         "自动喂食器": ("每天按时出粮，从来没出过错|手机上设置分量很方便", "经常卡粮，猫饿了一上午|软件老是连不上"),
         "宠物窝": ("我家狗天天趴在上面不下来|外套可以拆洗，干得也快", "棉花几天就塌了|洗一次就缩水变形了"),
         "猫粮": ("猫咪很爱吃，毛色都亮了|颗粒大小合适，吃完也不软便", "猫闻了一下就走开了，一口都不吃|吃了两天就开始拉肚子")},
        m="这款"),
    "kids": _cat(
        "儿子生日买的{p}。|宝宝从春天开始每天都用{p}。|给外甥女买的{p}。",
        ("孩子一玩就是一下午|做工很好，孩子用着放心|老人也说买得值", "孩子玩了一天就不感兴趣了|做工粗糙，边角还很锋利|没用几天零件就松了"),
        {"积木": ("拼插很紧，不容易散|能和大牌积木一起拼", "少了好几块零件|拼上去一碰就散"),
         "婴儿推车": ("单手就能收车，太方便了|路不平也推得很稳", "轮子经常卡住|刹车几乎没用"),
         "儿童滑板车": ("孩子每天骑着去上学|高度可以调，能用好几年", "把手松松垮垮的，感觉不安全|一个月轮子就裂了"),
         "婴儿监控器": ("夜视画面很清楚|宝宝一动就会提醒", "信号老是断|声音一直有沙沙的杂音"),
         "拼图": ("图案印得很清晰，块与块之间很合|下雨的周末全家一起拼很开心", "好多块根本拼不上|图案很模糊，还掉纸皮"),
         "绘本": ("画风很可爱，孩子每天睡前都要看|故事很温暖，还能学道理", "纸张很薄，一翻就破|翻译很别扭，读给孩子听都费劲")},
        m="这套"),
    "home": _cat(
        "上周末自己装好了{p}。|在家办公，{p}一天要用十个小时。|新房子买的{p}。",
        ("安装很简单，装好之后很稳|尺寸刚好放进房间的角落|看着比价格高级多了", "有很重的胶水味，放了半个月还有|孔位都对不上，装了一个下午|"
         "到货的时候有一块板子裂了"),
        {"办公椅": ("坐一天腰也不酸|扶手各个方向都能调", "坐垫一个月就塌了|一动就吱吱响"),
         "台灯": ("灯光柔和不闪，看书眼睛不累|灯臂调到哪里就停在哪里", "灯一直在闪|灯臂用一会儿就往下掉"),
         "书架": ("放满了精装书也不变形|隔板高度可以随便调", "放几本书隔板就弯了|一边高一边低，放着是歪的"),
         "遮光窗帘": ("拉上之后白天屋里也是黑的|夏天屋里都凉快了不少", "还是透光，遮光效果很一般|比写的尺寸短了一大截"),
         "床垫": ("软硬适中，睡得很舒服|翻身也不会吵到旁边的人", "睡了几个星期就塌了|睡着很闷热，还有海绵味"),
         "升降桌": ("升降很顺滑，声音很小|升到最高也很稳", "站着用的时候晃得厉害|用了一个月电机就不动了")}, m="这款"),
    "gadgets": _cat(
        "活动的时候买的{p}。|{p}用了一个多月了。|{p}主要是上班用。",
        ("连手机只用了两分钟|开箱就能用，设置很简单|做工扎实，用着很放心", "用着用着就自己断电了|配套的软件很难用，老是闪退|客服一直不回消息"),
        {"电子书阅读器": ("看书看久了眼睛也不累|续航很长，几个星期充一次", "翻页经常卡住|放一晚上就没电了"),
         "摄像头": ("画面清晰，麦克风收音也好|光线暗一点也拍得清楚", "画面全是噪点|声音闷闷的，开会别人听不清"),
         "无人机": ("悬停很稳，拍出来的视频很流畅|新手也很容易上手", "第一次飞就失控撞树了|图传老是断"),
         "投影仪": ("晚上投到白墙上看电影效果很好|自带的音响效果也不错", "白天投出来什么都看不清|风扇声音比电影还大"),
         "显示器": ("色彩很准，开箱就能用|字很清楚，看久了眼睛也不累", "屏幕四个角漏光很严重|到手就有两个坏点"),
         "行车记录仪": ("晚上录的画面也很清楚|上次刮蹭全靠它录下来了", "录的视频很模糊，时间也不对|夏天一晒就死机")}, m="这款"),
    "takeaway": _cat(
        "中午在公司点的{p}。|周五晚上点了{p}。|第一次在这家点{p}。",
        ("每样菜都分开装，一点没洒|比预计时间早到了二十分钟|分量很大，两个人都吃饱了|还送了一瓶饮料，很贴心",
         "送到的时候已经凉透了|袋子破了，油洒得到处都是|加钱要的配料根本没放"),
        {"螺蛳粉": ("汤底很香，酸笋很够味|粉很有嚼劲", "粉泡得太软了，一点嚼劲都没有|汤一点都不辣，还特别咸"),
         "麻辣烫": ("菜很新鲜，汤底也很浓|麻酱给得很足", "菜有股怪味，不太新鲜|汤底全是味精味"),
         "煲仔饭": ("锅巴很脆，腊肠也香|米饭一粒一粒的很好吃", "米饭是夹生的|腊肠只有薄薄的几片"),
         "黄焖鸡米饭": ("鸡肉很嫩，汤汁拌饭特别好吃|香菇和土豆都炖得很入味", "鸡肉又柴又硬|大半都是骨头，没几块肉"),
         "烤串": ("肉串很嫩，孜然放得刚好|送到还是热乎的，一点不腥", "肉少得可怜，几乎全是签子|羊肉串有一股膻味"),
         "生煎包": ("底很脆，咬一口全是汤汁|皮薄馅大", "底都烤糊了|馅儿很少，还是凉的")}, m="这家", shop="food"),
    "stays": _cat(
        "在这家{p}住了四晚。|出差住的{p}。|度蜜月订的{p}。",
        ("床很软，床品也很干净|半夜到的也能顺利入住|晚上很安静，开着窗也能睡好|热水很足，洗澡很舒服|走几分钟就到古镇",
         "卫生间角落都发霉了|隔音太差，隔壁说话听得一清二楚|连着两天早上没有热水|床单上有污渍|网络几乎连不上|床上发现了虫子"),
        {"民宿": ("老板人很好，推荐的几家小店都很好吃", "被锁在门外，老板电话一直打不通"),
         "青旅": ("储物柜很大，公共区域也很热闹", "宿舍很脏，柜子还锁不上"),
         "度假村": ("阳台上的海景特别美", "照片上的泳池在维修，根本用不了"),
         "公寓": ("厨房用品很齐全，可以自己做饭", "厨房什么锅都没有，冰箱也是坏的"),
         "客栈": ("院子很漂亮，早上还有免费的茶", "暖气不热，晚上冻得睡不着")}, m="这家", shop="stay"),
    "care": _cat(
        "{p}每天都在用，用了一个月。|姐姐推荐的{p}。|旅游的时候顺手买的{p}。",
        ("已经成了每天必用的东西|比之前用的大牌还好用|包装也很精致", "用了一个星期就放着不用了|还不如之前用的便宜货|收到的东西跟图片完全不一样"),
        {"洗发水": ("洗完头发很顺，不毛躁了|头皮也不痒了", "用完头皮很痒，还掉皮屑|洗完头发像稻草一样"),
         "指甲油": ("涂了一个星期都没掉|两遍就很饱满，很有光泽", "第二天就掉了一块|涂了三遍还是不均匀"),
         "润唇膏": ("嘴唇一整天都很滋润|不黏，还有一点淡淡的颜色", "越涂嘴越干|放口袋里就化了"),
         "身体乳": ("吸收很快，一点都不黏|胳膊肘终于不干了", "涂完黏糊糊的，很久都不吸收|香味太浓了，闻着头晕"),
         "电动牙刷": ("刷完牙齿很干净|充一次电能用三个星期", "用了一个星期就充不进电了|震得牙龈发麻"),
         "卷发棒": ("几分钟就能卷好，还不伤头发|一分钟就热了", "老是夹头发|每次用都有股焦味")}, m="这款"),
    "games": _cat(
        "买来送弟弟的{p}。|网上看到推荐买的{p}。|{p}用了一个月了。",
        ("印刷很好，纸也厚|这个价格很值|每一页都看得出很用心", "内容太浅了，不值这个价|印刷很淡，看着很费眼|收到的时候封面是破的"),
        {"菜谱": ("按照菜谱做出来味道很好|配图很清楚，一看就会", "照着做了好几道都失败了|用量写得乱七八糟"),
         "桌游": ("朋友聚会玩得特别开心|规则简单，但是很耐玩", "规则写得乱七八糟，看半天看不懂|卡牌很薄，玩一次就折了"),
         "漫画": ("画风很精美，剧情也有意思|一口气看了两遍", "剧情很水，结尾也很仓促|画得很潦草"),
         "练习册": ("题目由浅入深，很适合复习|解析写得很详细", "答案错了好多|大部分内容都是凑字数"),
         "字帖": ("纸张好，写起来不洇墨|练了一个月字好看多了", "纸太薄了，一写就透|字印得歪歪扭扭的")}, m="这本"),
}
ZH_MINOR: dict[str, tuple[list[str], list[str]]] = {
    "goods": (_s("外观挺好看的|发货很快|包装很精美|价格很便宜|客服态度挺好|颜色很漂亮|图片看着很高级|安装很简单"),
              _s("物流慢了几天|外包装有点压扁了|价格稍微有点贵|说明书写得不太清楚|颜色和图片有一点色差|刚开始不太会用|包装有点简陋|"
                 "比想象中重一点")),
    "food": (_s("骑手态度很好|包装看着挺干净|用了优惠券很便宜|店里的图片看着很有食欲|餐具给得很齐全"),
             _s("骑手找不到楼，多等了一会儿|送了快一个小时|价格比堂食贵一点|包装盒有点薄|忘了给筷子")),
    "stay": (_s("地图上看位置很好|价格挺实惠|前台很有礼貌|网上的照片很好看|预订很方便"),
             _s("离地铁站有点远|停车要另外收费|办入住等了一会儿|价格比周边贵一点|电梯有点慢")),
}
ZH_EXPECT = {"goods": ("便宜没好货", "会很难用", "效果一般"), "food": ("外卖会很一般", "分量会很少"),
             "stay": ("这个价格住不到什么好地方", "会很吵")}
ZH_VERDICT: dict[str, tuple[list[str], list[str]]] = {
    "any": (_s("推荐购买|五星好评|整体很满意|强烈推荐|给个大大的赞|已经安利给同事了"),
            _s("不推荐|差评|很失望|大家别踩坑|一星都不想给|白花钱")),
    "goods": (_s("会回购的|值得入手|买得很值"), _s("不会再买了|已经申请退货了|后悔买了")),
    "food": (_s("下次还点这家|会经常点的"), _s("再也不点了|已经申请退款了")),
    "stay": (_s("下次还住这里|下次来还会选这家"), _s("再也不住了|下次不会再订了")),
}
ZH_MILD_POS = _s("还行吧，对得起这个价|中规中矩，够用了|整体还可以|凑合着用挺好的|算是比较满意")
ZH_MILD_NEG = _s("一般般，有点失望|有点鸡肋|能用，但是不值这个价|感觉很普通，不太推荐|跟期待的差了不少")
ZH_ATTRS = _s("质量|做工|材质|手感|用料|效果")
ZH_NEGATED_POS = _s("{a}一点也不差|{a}没什么可挑剔的|{a}不比大牌差|{a}没有想象中差|{a}不输专柜|一点都不后悔|没让我失望|"
                    "挑不出什么毛病|用了这么久没出过问题|不会让你失望的")
ZH_NEGATED_NEG = _s("{a}不怎么样|{a}没有想象中好|{a}谈不上好|{a}不太行|{a}算不上好|用起来不太顺手|不是很满意|不值得买|"
                    "不会推荐给朋友|没感觉有什么效果")
ZH_STRONG_POS = _s("真的很满意|非常推荐|超级好用|确实物有所值|实在是太喜欢了")
ZH_STRONG_NEG = _s("真的很失望|实在是太差了|非常不推荐|确实不值这个钱|超级后悔")
ZH_BUT = ("虽然{a}，但是{b}", "{a}，不过{b}", "{a}，可是{b}", "{a}，但{b}")
ZH_GENERIC_OPEN = _s("来追评一下。|说一下真实感受。|老顾客了。|用了一段时间再来评价。")
ZH_WHO = _s("老婆|老公|爸妈|室友|女儿|奶奶")
ZH_TYPOS = (("的", "得"), ("在", "再"), ("已经", "以经"), ("做工", "作工"), ("非常", "飞常"), ("根本", "跟本"),
            ("收到", "收倒"), ("，", ","), ("。", ""))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _name_first_en(clause: str, product: str) -> str:
    """A clause that opens the review should say what it is about: 'it heats evenly' -> 'the skillet heats evenly'."""
    for lead, repl in (("it's ", f"the {product} is "), ("it ", f"the {product} ")):
        if clause.lower().startswith(lead):
            return repl + clause[len(lead):]
    return clause


def _review_en(rng: random.Random, positive: bool, kind: str) -> str:
    cat = EN[rng.choice(sorted(EN))]
    product = rng.choice(sorted(cat.items))
    opener = ""
    if rng.random() < 0.45:
        gift = [] if cat is EN["stays"] else [f"Bought the {{p}} for my {rng.choice(EN_WHO)}."]
        opener = rng.choice(cat.openers + EN_GENERIC_OPEN + gift).format(p=product)
    side = 0 if positive else 1
    verdict = rng.choice(EN_VERDICT["any"][side] + EN_VERDICT[cat.shop][side])
    clauses = cat.clauses(rng, product, positive, rng.choice((1, 1, 2, 2, 3)))
    if kind == "plain":
        joined = ", ".join(clauses[:-1]) + (", and " if len(clauses) > 2 else " and ") + clauses[-1]
        body = [joined if len(clauses) > 1 and rng.random() < 0.5 else ". ".join(map(_cap, clauses))]
        if rng.random() < 0.6 or not opener and len(clauses) == 1:
            lead = rng.choice(EN_INTENS) + " " if rng.random() < 0.3 else ""
            body.append(lead + verdict + ("!" if rng.random() < 0.3 else ""))
    elif kind == "mild":
        body = [clauses[0], rng.choice(EN_MILD_POS if positive else EN_MILD_NEG)]
    elif kind == "negation":
        neg = rng.choice(EN_NEGATED_POS if positive else EN_NEGATED_NEG).format(a=rng.choice(EN_ATTRS))
        # Half the time the negated phrase is the only sentiment cue, so reading it right is required.
        body = [neg] if rng.random() < 0.5 else ([clauses[0], neg] if rng.random() < 0.5 else [neg, clauses[0]])
    elif kind == "contrast":
        minor = rng.choice(EN_MINOR[cat.shop][1 - side])
        tpl = rng.choice(EN_BUT)
        body = [tpl.format(a=minor, A=_cap(minor), b=clauses[0])]
        if rng.random() < 0.3:
            body.append(verdict)
    else:  # mixed: a remark each way; the closing conclusion decides
        other = cat.aside(rng, EN_MINOR, not positive)
        if rng.random() < 0.5:
            pros, cons = (clauses[0], other) if positive else (other, clauses[0])
            body = [f"Pros: {pros}", f"Cons: {cons}", f"Verdict: {verdict}"]
        else:
            body = [other, rng.choice(("But", "On the other hand,", "Then again,")) + " " + clauses[0],
                    rng.choice(("Overall", "All in all", "In the end")) + ", " + verdict]
    if product not in opener and kind != "mixed":
        body[0] = _name_first_en(body[0], product)
    text = " ".join(x for x in [opener] + [_cap(b) + ("" if b[-1] in "!." else ".") for b in body] if x)
    return text


def _review_zh(rng: random.Random, positive: bool, kind: str) -> str:
    cat = ZH[rng.choice(sorted(ZH))]
    product = rng.choice(sorted(cat.items))
    opener = ""
    if rng.random() < 0.45:
        gift = [] if cat is ZH["stays"] else [f"给{rng.choice(ZH_WHO)}买的{{p}}。"]
        opener = rng.choice(cat.openers + ZH_GENERIC_OPEN + gift).format(p=product)
    side = 0 if positive else 1
    verdict = rng.choice(ZH_VERDICT["any"][side] + ZH_VERDICT[cat.shop][side])
    clauses = cat.clauses(rng, product, positive, rng.choice((1, 1, 2, 2, 3)))
    end = "！" if rng.random() < 0.25 else "。"
    if kind == "plain":
        parts = list(clauses)
        if rng.random() < 0.6 or not opener and len(clauses) == 1:
            strong = ZH_STRONG_POS if positive else ZH_STRONG_NEG
            parts.append(rng.choice(strong) if rng.random() < 0.3 else verdict)
        body = "，".join(parts)
    elif kind == "mild":
        body = clauses[0] + "，" + rng.choice(ZH_MILD_POS if positive else ZH_MILD_NEG)
    elif kind == "negation":
        neg = rng.choice(ZH_NEGATED_POS if positive else ZH_NEGATED_NEG).format(a=rng.choice(ZH_ATTRS))
        body = neg if rng.random() < 0.5 else ("，".join((clauses[0], neg)) if rng.random() < 0.5 else
                                               "，".join((neg, clauses[0])))
    elif kind == "contrast":
        if positive and rng.random() < 0.25:
            body = f"本来以为{rng.choice(ZH_EXPECT[cat.shop])}，没想到{clauses[0]}"
        elif not positive and rng.random() < 0.3:
            body = f"{rng.choice(ZH_MINOR[cat.shop][0])}，{rng.choice(('可惜', '就是'))}{clauses[0]}"
        else:
            minor = rng.choice(ZH_MINOR[cat.shop][1 - side])
            body = rng.choice(ZH_BUT).format(a=minor, b=clauses[0])
        if rng.random() < 0.3:
            body += "，" + verdict
    else:  # mixed
        other = cat.aside(rng, ZH_MINOR, not positive)
        if rng.random() < 0.5:
            pros, cons = (clauses[0], other) if positive else (other, clauses[0])
            body = f"优点是{pros}，缺点是{cons}。{rng.choice(('总的来说', '综合下来', '总体'))}{verdict}"
        else:
            link = rng.choice(("但是", "不过", "好在" if positive else "可惜"))
            body = f"{other}，{link}{clauses[0]}。{verdict}"
    if not opener and kind in ("plain", "negation") and rng.random() < 0.6:
        body = f"{cat.measure}{product}{body}"
    return opener + body + end


def _typo_en(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    idx = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not idx or rng.random() < 0.2:
        return text.lower() if rng.random() < 0.5 else text.rstrip(".")
    i = rng.choice(idx)
    w, j = words[i], rng.randrange(1, len(words[i]) - 2)
    words[i] = rng.choice((w[:j] + w[j + 1] + w[j] + w[j + 2:], w[:j] + w[j + 1:], w[:j] + w[j] + w[j:]))
    return " ".join(words)


def _typo_zh(text: str, rng: random.Random) -> str:
    options = [(a, b) for a, b in ZH_TYPOS if a in text]
    if not options:
        return text
    a, b = rng.choice(options)
    return text.replace(a, b, 1)


def make_reviews(n: int, seed: int = 0, lang: Lang = "mix", *, with_kind: bool = False) -> list[dict[str, str]]:
    """Generate ``n`` labelled synthetic reviews, deterministic for ``seed``.

    Labels are exactly balanced within each language (off by one for odd counts); ``lang="mix"`` splits the rows
    half English, half Chinese. ``with_kind`` adds the structure ("plain", "negation", ...) for per-kind analysis.

    Raises:
        ValueError: ``n`` is negative or ``lang`` is not one of mix/en/zh.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if lang not in ("mix", "en", "zh"):
        raise ValueError(f"lang must be 'mix', 'en' or 'zh', got {lang!r}")
    rng = random.Random(seed)
    langs = {"en": ["en"] * n, "zh": ["zh"] * n, "mix": ["en"] * (n // 2) + ["zh"] * (n - n // 2)}[lang]
    plan: list[tuple[str, bool]] = []
    for code in ("en", "zh"):
        count = langs.count(code)
        labels = [True] * (count // 2) + [False] * (count // 2) + ([rng.random() < 0.5] if count % 2 else [])
        plan += [(code, positive) for positive in labels]
    rng.shuffle(plan)
    seen: set[str] = set()
    rows: list[dict[str, str]] = []
    for code, positive in plan:
        make = _review_en if code == "en" else _review_zh
        for _attempt in range(40):  # retry for a fresh text; short structures can repeat
            kind = rng.choices(KINDS, weights=KIND_WEIGHTS)[0]
            text = make(rng, positive, kind)
            if rng.random() < TYPO_RATE:
                text = (_typo_en if code == "en" else _typo_zh)(text, rng)
            if text not in seen:
                break
        seen.add(text)
        row = {"text": text, "label": "positive" if positive else "negative", "lang": code}
        if with_kind:
            row["kind"] = kind
        rows.append(row)
    return rows


def to_alpaca(rows: list[dict[str, str]], instruction: str = SENTIMENT_INSTRUCTION) -> list[dict[str, str]]:
    """The same rows as alpaca records (instruction/input/output), for code that skips the CSV converter."""
    return [{"instruction": instruction, "input": r["text"], "output": r["label"]} for r in rows]


def write_csv(rows: list[dict[str, str]], out: str | Path) -> Path:
    """Write rows as UTF-8 CSV with a header (text,label,lang[,kind]) that pandas and the converter read."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["text", "label", "lang"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write a synthetic held-out review set (CSV: text,label,lang).")
    ap.add_argument("--n", type=int, default=3000, help="number of reviews")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--lang", choices=("mix", "en", "zh"), default="mix")
    ap.add_argument("--out", required=True, help="CSV file to write")
    ap.add_argument("--with-kind", action="store_true", help="add a 'kind' column (plain/mild/negation/...)")
    args = ap.parse_args(argv)
    rows = make_reviews(args.n, args.seed, args.lang, with_kind=args.with_kind)
    write_csv(rows, args.out)
    pos = sum(r["label"] == "positive" for r in rows)
    print(f"wrote {len(rows)} reviews to {args.out} ({pos} positive, {len(rows) - pos} negative)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
