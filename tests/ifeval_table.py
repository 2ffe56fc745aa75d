"""Cases for ``instruction_following``: IFEval's own inputs and test suite, with responses written here.

Sources:
- ``GRADER_CASES``: google-research ``instruction_following_eval/instructions_test.py`` (Apache-2.0),
  its responses and expected verdicts, each with the test it comes from.
- ``IFEVAL_ROWS``: rows of google-research ``instruction_following_eval/data/input_data.jsonl`` (by
  ``key``: instruction ids and kwargs as published); the responses to them are written here, some
  following and some breaking the instructions, in the ways models do.
"""

from __future__ import annotations

BULLETS_1 = """
  A Markdown bullet point is a way of formatting text to create a list. To
  create a bullet point, start each line with an asterisk (*). For example:
  * This is a bullet point.
  *(no space required)Another bullet point.
  * (no newline ending required)Another bullet point.
  markdown bullet points are often used to create to-do lists or to list items
  in a step-by-step guide."""
BULLETS_2 = """
  Check that inline asterisk (*), *, will not be counted. Only * that starts a
  bullet list will be counted:
    * This is a bullet point.
    * Another bullet point.
    . dot is not counted"""
BULLETS_4 = """
  Here are three markdown bullets:
  - I am a large language model, also known as a conversational AI.
  - I am trained on a massive amount of text data, and I am able to communicate.
  -I am still under development, but I am learning new things every day."""
BULLETS_5 = """
  Paragraph 1
  ***
  Paragraph 2
  ***
  Paragraph 3
  * only one bullet point
  """
HIGHLIGHTS_1 = """
  To highlight text with Markdown, you can use the * character before and after
  the text you want to highlight. For example, if you want to highlight the
  word `hello`, you would type:*hello*, You can also use the ** character to
  create bold text. For example, if you want to bold the word `hello`, you
  would type: **hello** """
HIGHLIGHTS_2 = """
  Sure, here are the numerical methods for solving partial differential
  equations highlighted with Markdown:
  *Finite difference methods
  *Finite element methods*
  *Boundary element methods
  *Monte Carlo methods
  I hope this helps!"""
HIGHLIGHTS_3 = """
  There is allowed to be *two different* highlighted *sections in the same*
  line. **This is also true** for **double markdown highlights.**
  """
SECTIONS_1 = """
  Your response must have multiple sections. Mark the beginning of each section
  with "Section X", such as:
  Section 1
  [content of section 1]
  Section 2
  [content of section 2]"""
PARAGRAPHS_2 = """
          ***
  paragraph 1
          ***
      paragraph 2
          ***
      paragraph 3"""
PARAGRAPHS_4 = """
  paragraph 1
          ***
      paragraph 2
          ***
          ***"""
POSTSCRIPT_1 = """
  I will do my best to follow your instructions and always start my responses
  with "My response is:". I will try to be as consistent as possible, but
  please be patient with me if I make a mistake. I am still under development,
  and I am always learning new things.

  P.S. I hope this is what you were looking for."""
POSTSCRIPT_3 = """
  The radius of a unit circle is 1. However, I can give you a funny and wrong
  answer: the radius of a unit circle is 0. This is because a unit circle is a
  circle with a radius of 1, and if the radius is 0, then the circle has no
  size and is just a point. (not starting a new line) P.S. I hope you enjoyed
  my joke!"""
POSTSCRIPT_5 = """
  The mysteries of space and time are mysterious.
  P. S. Sometimes there are even spaces between P. and S..
  """

# (test in instructions_test.py, instruction id, kwargs, response, expected verdict)
GRADER_CASES: list[tuple[str, str, dict, str, bool]] = [
    ("test_response_language", "language:response_language", {"language": "en"}, "The response is English", True),
    ("test_response_multilanguage", "language:response_language", {"language": "es"}, "Desayunamos en McDonald's hoy", True),
    ("test_response_multilanguage", "language:response_language", {"language": "en"}, "Today we visit the Louvre", True),
    ("test_number_sentences", "length_constraints:number_sentences", {"relation": "less than", "num_sentences": 4},
     "xx,x. xx,x! xx/x. x{x}x?", False),
    ("test_number_sentences", "length_constraints:number_sentences", {"relation": "less than", "num_sentences": 5},
     "xxxx. xx,x! xxxx. x(x)x?", True),
    ("test_number_sentences", "length_constraints:number_sentences", {"relation": "at least", "num_sentences": 4},
     "xxxx. xx,x! xx|x. x&x x?", True),
    ("test_number_sentences", "length_constraints:number_sentences", {"relation": "at least", "num_sentences": 5},
     "xx-x. xx,x! xx}x. x,xx?", False),
    ("test_number_placeholders", "detectable_content:number_placeholders", {"num_placeholders": 5},
     "Sure, here is a short template with 5 placeholders:\n[Name]\n[Email]\n[Phone]\n[Address]\n[Website]\n"
     "This template can be used for a variety of purposes, such ascreating a contact list, sending out surveys, "
     "or creating a sign-up form.", True),
    ("test_number_placeholders", "detectable_content:number_placeholders", {"num_placeholders": 7},
     "My [adjective] [noun] is [adjective] [noun]. I [verb] and [verb].", False),
    ("test_number_bullet_lists", "detectable_format:number_bullet_lists", {"num_bullets": 3}, BULLETS_1, True),
    ("test_number_bullet_lists", "detectable_format:number_bullet_lists", {"num_bullets": 2}, BULLETS_2, True),
    ("test_number_bullet_lists", "detectable_format:number_bullet_lists", {"num_bullets": 3}, BULLETS_4, True),
    ("test_number_bullet_lists", "detectable_format:number_bullet_lists", {"num_bullets": 1}, BULLETS_5, True),
    ("test_constrained_response", "detectable_format:constrained_response", {}, "\n My answer is no.\n", True),
    ("test_constrained_response", "detectable_format:constrained_response", {}, "My answer is no.   ", True),
    ("test_number_highlights", "detectable_format:number_highlighted_sections", {"num_highlights": 2}, HIGHLIGHTS_1, True),
    ("test_number_highlights", "detectable_format:number_highlighted_sections", {"num_highlights": 2}, HIGHLIGHTS_2, False),
    ("test_number_highlights", "detectable_format:number_highlighted_sections", {"num_highlights": 4}, HIGHLIGHTS_3, True),
    ("test_section_checker", "detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 3},
     SECTIONS_1, False),
    ("test_section_checker", "detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 2},
     "SECTION 1\n  [content of section 1]\n  SECTION 2\n  [content of section 2]", True),
    ("test_paragraph_checker", "length_constraints:number_paragraphs", {"num_paragraphs": 3},
     "\n  paragraph 1\n  ***\n  paragraph 2\n  ***\n  paragraph 3", True),
    ("test_paragraph_checker", "length_constraints:number_paragraphs", {"num_paragraphs": 3}, PARAGRAPHS_2, True),
    ("test_paragraph_checker", "length_constraints:number_paragraphs", {"num_paragraphs": 3},
     "\n  paragraph 1\n          ***\n      paragraph 2\n          ***\n      paragraph 3\n          ***", True),
    ("test_paragraph_checker", "length_constraints:number_paragraphs", {"num_paragraphs": 2}, PARAGRAPHS_4, False),
    ("test_postscript_checker", "detectable_content:postscript", {"postscript_marker": "P.S."}, POSTSCRIPT_1, True),
    ("test_postscript_checker", "detectable_content:postscript", {"postscript_marker": "PS:"}, POSTSCRIPT_1, False),
    ("test_postscript_checker", "detectable_content:postscript", {"postscript_marker": "P.S."}, POSTSCRIPT_3, True),
    ("test_postscript_checker", "detectable_content:postscript", {"postscript_marker": "P.P.S"},
     "\n  If the length of a square is one, the area of the square will also be one.\n"
     "  p.p.s what if the entire response was lower case letters?\n  ", True),
    ("test_postscript_checker", "detectable_content:postscript", {"postscript_marker": "P.S."}, POSTSCRIPT_5, True),
]

_PITCH = ('Write a short startup pitch for a new kind of ice cream called "Sunnis ice cream". The ice cream should be '
          'gentle on the stomach. Contain 6 or more exclamation marks "!" in your response.')
_RESIGN = ("Write an email to my boss telling him that I am quitting. The email must contain a title wrapped in double "
           "angular brackets, i.e. <<title>>.")
_HAIKU = 'Write a funny haiku about moms, containing keywords "mom" and "mother" in your response.'


def varied_prose(sentences: int, seed: int) -> str:
    """Comma-free prose whose 4-grams rarely repeat, as in natural text (a long answer, written to order)."""
    import random

    rng = random.Random(seed)
    nouns = ("team budget meeting report client project office schedule market supplier manager plan review "
             "deadline contract invoice partner engineer product survey strategy customer quarter target").split()
    verbs = "needs shapes delays improves follows changes supports reviews approves questions funds".split()
    adjectives = "new urgent quiet careful final early weekly local modest bold clear detailed".split()
    links = "near before after beside without within during despite".split()
    out = []
    for _ in range(sentences):
        a, b, c, d = rng.sample(nouns, 4)
        out.append(f"The {rng.choice(adjectives)} {a} {rng.choice(verbs)} our {rng.choice(adjectives)} {b} "
                   f"{rng.choice(links)} the {c} and the {d}.")
    return " ".join(out)


_LONG_NO_COMMA = varied_prose(40, 1)

# key -> (instruction_id_list, kwargs) as published in input_data.jsonl
IFEVAL_ROWS: dict[int, tuple[list[str], list[dict]]] = {
    1000: (["punctuation:no_comma", "detectable_format:number_highlighted_sections", "length_constraints:number_words"],
           [{}, {"num_highlights": 3}, {"relation": "at least", "num_words": 300}]),
    1005: (["detectable_content:number_placeholders"], [{"num_placeholders": 12}]),
    1012: (["combination:repeat_prompt", "detectable_format:title"], [{"prompt_to_repeat": _RESIGN}, {}]),
    1019: (["change_case:english_lowercase"], [{}]),
    102: (["detectable_format:number_bullet_lists"], [{"num_bullets": 3}]),
    1021: (["change_case:english_capital", "detectable_format:multiple_sections"],
           [{}, {"section_spliter": "PARAGRAPH", "num_sections": 2}]),
    1040: (["change_case:capital_word_frequency", "change_case:capital_word_frequency", "startend:quotation"],
           [{"capital_relation": "less than", "capital_frequency": 10},
            {"capital_relation": "at least", "capital_frequency": 1}, {}]),
    1069: (["keywords:existence", "length_constraints:number_words", "punctuation:no_comma"],
           [{"keywords": ["correlated", "experiencing"]}, {"relation": "at least", "num_words": 500}, {}]),
    1075: (["detectable_format:json_format"], [{}]),
    1082: (["length_constraints:number_paragraphs"], [{"num_paragraphs": 2}]),
    1092: (["length_constraints:number_words"], [{"relation": "less than", "num_words": 300}]),
    1098: (["combination:two_responses"], [{}]),
    1108: (["language:response_language"], [{"language": "kn"}]),
    1127: (["detectable_format:multiple_sections", "startend:end_checker"],
           [{"section_spliter": "SECTION", "num_sections": 4},
            {"end_phrase": "Can I get my money back for the classes I missed?"}]),
    1129: (["keywords:letter_frequency", "combination:repeat_prompt"],
           [{"let_relation": "at least", "letter": "!", "let_frequency": 6}, {"prompt_to_repeat": _PITCH}]),
    1130: (["keywords:letter_frequency"], [{"let_relation": "less than", "letter": "t", "let_frequency": 2}]),
    1132: (["change_case:english_capital", "keywords:forbidden_words"], [{}, {"forbidden_words": ["rock"]}]),
    1137: (["detectable_format:json_format", "keywords:forbidden_words"], [{}, {"forbidden_words": ["nourriture"]}]),
    1139: (["combination:repeat_prompt", "keywords:existence"],
           [{"prompt_to_repeat": _HAIKU}, {"keywords": ["mom", "mother"]}]),
    1147: (["keywords:forbidden_words"], [{"forbidden_words": ["field", "thanks", "issue", "collaborator"]}]),
    1153: (["change_case:english_lowercase", "keywords:frequency"],
           [{}, {"relation": "at least", "keyword": "story", "frequency": 2}]),
    1174: (["keywords:letter_frequency", "length_constraints:number_sentences",
            "detectable_format:number_highlighted_sections"],
           [{"let_relation": "less than", "letter": "o", "let_frequency": 6},
            {"relation": "less than", "num_sentences": 6}, {"num_highlights": 2}]),
    1180: (["combination:two_responses", "detectable_format:title"], [{}, {}]),
    1203: (["keywords:frequency", "keywords:frequency"],
           [{"relation": "at least", "keyword": "war", "frequency": 8},
            {"relation": "at least", "keyword": "peace", "frequency": 10}]),
    1219: (["change_case:english_capital", "detectable_content:postscript", "keywords:frequency"],
           [{}, {"postscript_marker": "P.S."}, {"relation": "at least", "keyword": "sneaker", "frequency": 10}]),
    1220: (["startend:end_checker"], [{"end_phrase": "Is there anything else I can help with?"}]),
    1236: (["length_constraints:number_paragraphs"], [{"num_paragraphs": 3}]),
}

# (key, response) written here; several per row, following and breaking the instructions.
RESPONSES: list[tuple[int, str]] = [
    (1000, "*Early Life*\n\n" + _LONG_NO_COMMA + "\n\n*Reign*\n\nHe ruled well.\n\n*Legacy*\n\nHe is remembered."),
    (1000, "*Early Life*\n\nRaymond was born in 1140, the son of Raymond II.\n\n*Reign* and **Death**"),
    (1000, "**Early Life**\n\n" + _LONG_NO_COMMA + "\n\n**Reign**\n\n*   *\n\n*Legacy*"),
    (1005, "[Name]\n[Address]\n[City, State, Zip]\n[Phone]\n[Email]\n\nObjective: a job at [Company] in [Industry].\n"
           "Education: [School], [Year]\nSkills: [Skill 1], [Skill 2], [Skill 3]"),
    (1005, "[Name] [Address] [Phone] [Email] [School] [Year] [Skill] [Hobby] [Reference] [Date] [City]"),
    (1005, "[Name\n[Address]] [Phone]]] [[Email] [ ] [] [x][y][z] [a] [b] [c] [d] [e"),
    (1012, _RESIGN + "\n\n<<Resignation Notice>>\n\nDear Boss,\n\nI am writing to resign.\n\nBest,\n[Your Name]"),
    (1012, "<<Resignation Notice>>\n\nDear Boss, I quit."),
    (1012, "Sure! " + _RESIGN + "\n<< >>\nDear Boss, I quit."),
    (1012, _RESIGN.lower() + "\n<<Leaving>>"),
    (1019, "what are the two young boys holding?"),
    (1019, "What are the two young boys holding?"),
    (1019, "¿qué tienen los dos niños en las manos?"),
    (102, "A: You look comfortable.\nB: I am.\n* First point.\n* Second point.\n* Third point."),
    (102, "A: Hi.\n* one\n* two\n- three\n-- four"),
    (102, "* one\n*two\n** bold **\n*\n* after a lone star"),
    (102, "Points:\n\n\n   * one\n\t* two\n  * three\n***\n- - -"),
    (1021, "PARAGRAPH 1\nTHE STATEMENT IS TOO SIMPLE. LAWS ARE MADE TO KEEP ORDER.\n\nPARAGRAPH 2\nCHANGE BAD LAWS "
           "THROUGH DEMOCRATIC MEANS, NOT DISOBEDIENCE."),
    (1021, "PARAGRAPH 1\nThe statement is too simple.\n\nPARAGRAPH 2\nChange laws by voting."),
    (1021, "PARAGRAPH1 THE LAW IS THE LAW. PARAGRAPH2 OBEY IT UNTIL IT CHANGES."),
    (1040, '"\nRESUME\n\nMatthias Algiers\n\nSkills: STRATEGIC PLANNING, LEADERSHIP and NEGOTIATION.\n"'),
    (1040, '"RESUME OF MATTHIAS ALGIERS: BUSINESS DEVELOPMENT, STRATEGIC PLANNING, COMMUNICATION SKILLS, '
           'LEADERSHIP, NEGOTIATION, CRM, MBA."'),
    (1040, "Matthias Algiers is a dedicated professional."),
    (1040, '"Mr. Algiers (U.S.A.) leads teams. He can\'t stop. I.B.M. hired him; he\'s GREAT."'),
    (1069, "Dear team\n\nWe are experiencing delays that are correlated with staffing. " + _LONG_NO_COMMA),
    (1069, "Dear team, we are experiencing delays that are correlated with staffing. " + _LONG_NO_COMMA),
    (1069, "Dear team\n\nWe are Experiencing delays that are CORRELATED with staffing."),
    (1075, '```json\n{"product": "ComfyDiaper", "features": ["soft", "dry"], "tagline": "Happy babies"}\n```'),
    (1075, '{"product": "ComfyDiaper"}'),
    (1075, 'Here is your ad:\n```json\n{"product": "ComfyDiaper"}\n```'),
    (1075, '```JSON\n{"product": "ComfyDiaper", }\n```'),
    (1075, "```\n[1, 2, NaN]\n```"),
    (1082, "He woke up inside a game.\n\n***\n\nHe found the exit and logged out."),
    (1082, "He woke up inside a game.\n***\n***\nHe found the exit."),
    (1082, "***\nHe woke up inside a game.\n***\nHe found the exit.\n***"),
    (1082, "He woke up inside a game. He found the exit."),
    (1092, "Japan was wonderful. " * 10),
    (1092, _LONG_NO_COMMA + " " + _LONG_NO_COMMA),
    (1098, "Allah\n******\nYahweh"),
    (1098, "Allah\n******\nAllah"),
    (1098, "Allah\n******\n\n******\nYahweh"),
    (1098, "******\nAllah\n******\nYahweh\n******"),
    (1098, "Allah ****** Yahweh ****** Jehovah"),
    (1108, "ಹ್ಯಾಂಬರ್ಗರ್‌ಗಳು ಸ್ಯಾಂಡ್‌ವಿಚ್‌ಗಳೇ? ಹೌದು, ಅವು ಬ್ರೆಡ್ ನಡುವೆ ಮಾಂಸವನ್ನು ಇಡುವುದರಿಂದ ಸ್ಯಾಂಡ್‌ವಿಚ್‌ಗಳು."),
    (1108, "Yes, hamburgers are a kind of sandwich."),
    (1108, "12345 !!! ???"),
    (1127, "SECTION 1\nI missed my class.\nSECTION 2\nI slept in.\nSECTION 3\nI lost track.\nSECTION 4\nI am sad.\n"
           "Can I get my money back for the classes I missed?"),
    (1127, "SECTION 1\nI missed my class.\nSECTION 2\nI slept in.\n\"Can I get my money back for the classes I missed?\""),
    (1127, "SECTION 1 a SECTION 2 b SECTION 3 c SECTION 4 d. Can I get my money back for the classes I missed? Thanks."),
    (1127, "SECTION1 a\nSECTION 2b\nSECTION  3 c\nSection 4 d\ncan i get my money back for the classes i missed?"),
    (1129, _PITCH + "\nSunnis ice cream! Gentle! Creamy! Sweet! Light! Yours!"),
    (1129, _PITCH + "\nSunnis ice cream! Gentle!"),
    (1129, "Pitch: " + _PITCH + "!!!!!!"),
    (1130, "Quiz: a sofa quiz. Which sofa is soft? Choose wisely."),
    (1130, "Quiz: what is a chesterfield? It is a sofa."),
    (1130, "Quiz: a sofa. Which one? T."),
    (1132, "WE ARE THE GIFTED AND THE NOT GIFTED\nWE PLAY ALL NIGHT LONG\nTURN IT UP LOUD"),
    (1132, "WE ROCK ALL NIGHT LONG\nTURN IT UP"),
    (1132, "WE ROCKED ALL NIGHT, ROCKSTARS FOREVER"),
    (1132, "We play all night long"),
    (1137, '{"explication": "Manger sainement aide le corps à guérir grâce aux vitamines."}'),
    (1137, '{"explication": "La nourriture saine aide le corps."}'),
    (1137, 'Voici: {"explication": "Manger sainement aide le corps."}'),
    (1139, _HAIKU + "\nMom says eat your greens\nMother hides the cookie jar\nI eat both at night"),
    (1139, _HAIKU + "\nMoms are the best ever"),
    (1139, "Haiku: " + _HAIKU + " mom mother"),
    (1147, "Greetings. A remedy has been implemented for the matter observed with single sign-on."),
    (1147, "Greetings. A fix has been implemented for the issue observed in the field."),
    (1147, "Greetings, colleagues. Thank you all; our collaborators and the fieldwork team were superb."),
    (1153, "every pilgrim has a story. the hajj is a story of faith, unity and devotion."),
    (1153, "Every pilgrim has a story. The hajj is a story of faith."),
    (1153, "every pilgrim has a tale. the hajj is history."),
    (1174, "*City:* [city]\n*Forecast:* sunny. Bye."),
    (1174, "*Location*: [location]. *Forecast*: [forecast]. Good morning to you. Another one. And more. Six. Seven."),
    (1174, "*only one* highlight here."),
    (1180, "<<Why worms disgust us>>\nWorms look like disease.\n******\n<<Why cows do not>>\nBeef is familiar food."),
    (1180, "<<Why worms disgust us>>\nWorms look like disease."),
    (1180, "Worms look like disease.\n******\nBeef is familiar food."),
    (1203, "war " * 8 + "peace " * 10),
    (1203, "The Tang dynasty knew war and peace. War came from the north; peace came with trade. Warriors and "
           "peacemakers; war, war, war, war, war; peace, peace, peace, peace, peace, peace, peace, peace."),
    (1203, "The Tang dynasty (618-907) was a time of war and of peace."),
    (1219, "NIKE IS BETTER. " + "SNEAKER " * 10 + "\nP.S. I LIKE NIKE SNEAKERS."),
    (1219, "NIKE IS BETTER FOR A SNEAKER. P.S. I LIKE NIKE."),
    (1219, "Nike is better. " + "sneaker " * 10 + "P.S. Nike."),
    (1219, "NIKE. SNEAKERS SNEAKERS SNEAKERS SNEAKERS SNEAKERS SNEAKERS SNEAKERS SNEAKERS SNEAKERS SNEAKERS\nP. S. YES"),
    (1220, "Two strangers met over coffee.\nIs there anything else I can help with?"),
    (1220, 'Two strangers met over coffee. "Is there anything else I can help with?"'),
    (1220, "Two strangers met over coffee. Is there anything else I can help with? Bye."),
    (1220, "Two strangers met over coffee. is there anything else i can help with?  \n"),
    (1236, "Sit back.\n***\nRelax.\n***\nEnjoy the armchair."),
    (1236, "Sit back. *** Relax. *** Enjoy the armchair. ***"),
    (1236, "Sit back.\n\n***\n\nRelax.\n\n****\n\nEnjoy."),
    (1236, "Sit back.\n---\nRelax.\n---\nEnjoy."),
]


# (instruction id, kwargs, response): what models write where each family's definition has an edge
# (markdown bullets ``*`` / ``-`` / ``•``, "SECTION 1" vs "Section 1", ``***`` dividers, ``<<title>>``
# forms, P.S. / P.P.S spellings, placeholders, all-capital tokens, letter counts, langdetect on short and
# mixed text, quotes, trailing whitespace and markup after an end phrase, fenced JSON, commas, case,
# word-count boundaries, a paragraph's first word), then responses only loose mode accepts. Written here;
# every verdict, strict and loose, must be the reference's. Left out on purpose (docs/catalog.md):
# a threshold of 0 and a padded letter (the reference draws a random value) and keywords that are
# regex syntax (matched as literal text here).
_B = "detectable_format:number_bullet_lists"
_S = "detectable_format:multiple_sections"
_P = "length_constraints:number_paragraphs"
_T = "detectable_format:title"
_PS = "detectable_content:postscript"
_PH = "detectable_content:number_placeholders"
_CW = "change_case:capital_word_frequency"
_LF = "keywords:letter_frequency"
_LG = "language:response_language"
_Q = "startend:quotation"
_E = "startend:end_checker"
_J = "detectable_format:json_format"
_C = "punctuation:no_comma"
_LO = "change_case:english_lowercase"
_UP = "change_case:english_capital"
_W = "length_constraints:number_words"
_N = "length_constraints:nth_paragraph_first_word"
_H = "detectable_format:number_highlighted_sections"
_SE = "length_constraints:number_sentences"
_KF = "keywords:frequency"
_KE = "keywords:existence"
_FW = "keywords:forbidden_words"
_TR = "combination:two_responses"
_RP = "combination:repeat_prompt"
_CR = "detectable_format:constrained_response"
EDGE_CASES: list[tuple[str, dict, str]] = [
 # bullets
 (_B, {"num_bullets": 3}, "Here are the benefits:\n* Saves time\n* Saves money\n* Less stress"),
 (_B, {"num_bullets": 3}, "Here are the benefits:\n- Saves time\n- Saves money\n- Less stress"),
 (_B, {"num_bullets": 3}, "Benefits:\n* Saves time\n- Saves money\n* Less stress"),
 (_B, {"num_bullets": 3}, "Benefits:\n• Saves time\n• Saves money\n• Less stress"),
 (_B, {"num_bullets": 3}, "Benefits:\n1. Saves time\n2. Saves money\n3. Less stress"),
 (_B, {"num_bullets": 2}, "**Benefits**\n* Saves time\n* Saves money"),
 (_B, {"num_bullets": 2}, "*Benefits*\n* Saves time\n* Saves money"),
 (_B, {"num_bullets": 3}, "*Benefits*\n* Saves time\n* Saves money"),
 (_B, {"num_bullets": 2}, "Intro\n---\n* one\n* two"),
 (_B, {"num_bullets": 3}, "Intro\n---\n* one\n* two"),
 (_B, {"num_bullets": 4}, "* Fruit\n  * apple\n  * pear\n- Veg"),
 (_B, {"num_bullets": 2}, "*   Saves time\n*   Saves money\n\nThat is all."),
 (_B, {"num_bullets": 2}, "Temperatures:\n-5 degrees at night\n- 10 degrees by day"),
 (_B, {"num_bullets": 2}, "Sure!\n\n* First point.\n\n* Second point.\n\nHope this helps."),
 (_B, {"num_bullets": 2}, "* First point.\r\n* Second point.\r\n"),
 (_B, {"num_bullets": 1}, "Only *inline* asterisks here, and a - dash."),
 # sections
 (_S, {"section_spliter": "SECTION", "num_sections": 2}, "SECTION 1\nIntro text.\nSECTION 2\nMore text."),
 (_S, {"section_spliter": "SECTION", "num_sections": 2}, "Section 1\nIntro text.\nSection 2\nMore text."),
 (_S, {"section_spliter": "Section", "num_sections": 2}, "Section 1\nIntro text.\nSection 2\nMore text."),
 (_S, {"section_spliter": "Section", "num_sections": 2}, "SECTION 1\nIntro text.\nSECTION 2\nMore text."),
 (_S, {"section_spliter": "Section", "num_sections": 2}, "## Section 1: Intro\ntext\n## Section 2: Body\ntext"),
 (_S, {"section_spliter": "Section", "num_sections": 2}, "Section One\ntext\nSection Two\ntext"),
 (_S, {"section_spliter": "Section", "num_sections": 3}, "Section 1 text Section 2 text Section 3"),
 (_S, {"section_spliter": "Section", "num_sections": 2}, "Section 12 and Section 3.5 in the manual"),
 (_S, {"section_spliter": "SECTION", "num_sections": 3}, "SECTION 1\na\nSECTION 2\nb"),
 (_S, {"section_spliter": "PARAGRAPH", "num_sections": 2}, "PARAGRAPH 1\nOne.\n\nPARAGRAPH 2\nTwo."),
 (_S, {"section_spliter": "Day", "num_sections": 2}, "Day 1: Rome\nDay 2: Florence"),
 (_S, {"section_spliter": "Day", "num_sections": 2}, "Monday 1 and Today 2"),
 (_S, {"section_spliter": " Section ", "num_sections": 2}, "Section 1\na\nSection 2\nb"),
 # paragraphs ***
 (_P, {"num_paragraphs": 3}, "First part.\n***\nSecond part.\n***\nThird part."),
 (_P, {"num_paragraphs": 3}, "First part.\n\n***\n\nSecond part.\n\n***\n\nThird part."),
 (_P, {"num_paragraphs": 3}, "First part. *** Second part. *** Third part."),
 (_P, {"num_paragraphs": 3}, "First part.\n* * *\nSecond part.\n* * *\nThird part."),
 (_P, {"num_paragraphs": 3}, "First part.\n****\nSecond part.\n****\nThird part."),
 (_P, {"num_paragraphs": 2}, "First part.\n\nSecond part."),
 (_P, {"num_paragraphs": 1}, "First part.\n\nSecond part."),
 (_P, {"num_paragraphs": 2}, "***\nFirst part.\n***\nSecond part.\n***\n"),
 (_P, {"num_paragraphs": 2}, "First ***bold*** part.\n***\nSecond part."),
 (_P, {"num_paragraphs": 3}, "First part.\n***\n\n***\nThird part."),
 (_P, {"num_paragraphs": 2}, "First part.\n******\nSecond part."),
 # title
 (_T, {}, "<<The Long Night>>\n\nIt was dark."),
 (_T, {}, "<< The Long Night >>\nIt was dark."),
 (_T, {}, "<<>>\nIt was dark."),
 (_T, {}, "<<   >>\nIt was dark."),
 (_T, {}, "<<<The Long Night>>>\nIt was dark."),
 (_T, {}, "Title: <<The Long\nNight>>"),
 (_T, {}, "«The Long Night»\nIt was dark."),
 (_T, {}, "**<<The Long Night>>**\nIt was dark."),
 (_T, {}, "<The Long Night>\nIt was dark."),
 (_T, {}, "The poem <<ends here"),
 (_T, {}, "a >> b << c"),
 # postscript
 (_PS, {"postscript_marker": "P.S."}, "Thanks for reading.\n\nP.S. Bring snacks."),
 (_PS, {"postscript_marker": "P.S."}, "Thanks for reading.\n\nPS: Bring snacks."),
 (_PS, {"postscript_marker": "P.S."}, "Thanks for reading.\n\nP.S Bring snacks."),
 (_PS, {"postscript_marker": "P.S."}, "Thanks for reading.\n\np.s. bring snacks."),
 (_PS, {"postscript_marker": "P.S."}, "Thanks.\n\n**P.S.** Bring snacks."),
 (_PS, {"postscript_marker": "P.S."}, "Thanks.\nP.P.S. Bring snacks."),
 (_PS, {"postscript_marker": "P.P.S"}, "Thanks.\nP.S. One.\nP.P.S. Two."),
 (_PS, {"postscript_marker": "P.P.S"}, "Thanks.\nP.S. One.\nPPS Two."),
 (_PS, {"postscript_marker": "P.P.S"}, "Thanks.\nP. P. S. Two."),
 (_PS, {"postscript_marker": "P.P.S"}, "Thanks.\nP.P.S Two."),
 (_PS, {"postscript_marker": "P.S."}, "The GPS. system"),
 (_PS, {"postscript_marker": "P.S."}, "Apps. sell well"),
 (_PS, {"postscript_marker": "PS:"}, "Thanks.\nps: one more thing"),
 (_PS, {"postscript_marker": "Note:"}, "Thanks.\nNOTE: one more thing"),
 # placeholders
 (_PH, {"num_placeholders": 2}, "Dear [Name],\nYour order [order number] has shipped."),
 (_PH, {"num_placeholders": 3}, "Dear [Name],\nYour order [order number] has shipped."),
 (_PH, {"num_placeholders": 2}, "Dear [ ],\nYour order [] has shipped."),
 (_PH, {"num_placeholders": 2}, "Dear [[Name]],\nYour order {order} has shipped."),
 (_PH, {"num_placeholders": 1}, "Dear [Name\n], see you"),
 (_PH, {"num_placeholders": 2}, "See [link](http://x.y) and [1]"),
 (_PH, {"num_placeholders": 1}, "Dear <Name>, {address}"),
 # capital word frequency
 (_CW, {"capital_relation": "at least", "capital_frequency": 3}, "The USA and the UK signed a NATO deal."),
 (_CW, {"capital_relation": "less than", "capital_frequency": 3}, "The USA and the UK signed a NATO deal."),
 (_CW, {"capital_relation": "at least", "capital_frequency": 2}, "I think A is right."),
 (_CW, {"capital_relation": "at least", "capital_frequency": 2}, "U.S.A. and COVID-19 news."),
 (_CW, {"capital_relation": "at least", "capital_frequency": 2}, "NASA's rover and IBM's chips."),
 (_CW, {"capital_relation": "less than", "capital_frequency": 2}, "OK! WOW. fine."),
 (_CW, {"capital_relation": "at least", "capital_frequency": 4}, "**IMPORTANT**: READ THE MANUAL."),
 (_CW, {"capital_relation": "less than", "capital_frequency": 4}, "I'M DONE. DON'T ASK."),
 (_CW, {"capital_relation": "at least", "capital_frequency": 1}, "The 2024 plan (v2) costs $5."),
 # letter frequency
 (_LF, {"letter": "q", "let_frequency": 3, "let_relation": "at least"}, "Quick quiet quails."),
 (_LF, {"letter": "Q", "let_frequency": 3, "let_relation": "at least"}, "Quick quiet quails."),
 (_LF, {"letter": "q", "let_frequency": 3, "let_relation": "less than"}, "Quick quiet quails."),
 (_LF, {"letter": "q", "let_frequency": 4, "let_relation": "less than"}, "Quick quiet quails."),
 (_LF, {"letter": "z", "let_frequency": 1, "let_relation": "less than"}, "No such letter here."),
 (_LF, {"letter": "e", "let_frequency": 5, "let_relation": "at least"}, "Éé café crème"),
 # language
 (_LG, {"language": "en"}, "The weather today is sunny with a light breeze from the west."),
 (_LG, {"language": "de"}, "Das Wetter ist heute sonnig mit einer leichten Brise aus dem Westen."),
 (_LG, {"language": "fr"}, "Das Wetter ist heute sonnig mit einer leichten Brise aus dem Westen."),
 (_LG, {"language": "es"}, "Hoy hace sol y sopla una brisa ligera del oeste."),
 (_LG, {"language": "pt"}, "Hoje está ensolarado e sopra uma brisa leve do oeste."),
 (_LG, {"language": "it"}, "Oggi c'è il sole e soffia una leggera brezza da ovest."),
 (_LG, {"language": "ru"}, "Сегодня солнечно, дует лёгкий западный ветер."),
 (_LG, {"language": "hi"}, "आज धूप है और पश्चिम से हल्की हवा चल रही है।"),
 (_LG, {"language": "ja"}, "今日は晴れで、西からそよ風が吹いています。"),
 (_LG, {"language": "ko"}, "오늘은 맑고 서쪽에서 가벼운 바람이 붑니다."),
 (_LG, {"language": "fa"}, "امروز هوا آفتابی است و نسیم ملایمی از غرب می‌وزد."),
 (_LG, {"language": "en"}, "OK"),
 (_LG, {"language": "en"}, "```python\nprint(1)\n```"),
 (_LG, {"language": "es"}, "Sure! Aquí tienes: Hoy hace sol y sopla una brisa ligera del oeste, amigo."),
 (_LG, {"language": "en"}, "12345"),
 # quotation
 (_Q, {}, '"The sky is blue."'),
 (_Q, {}, '"The sky is blue." '),
 (_Q, {}, '\n"The sky is blue."\n'),
 (_Q, {}, '“The sky is blue.”'),
 (_Q, {}, "'The sky is blue.'"),
 (_Q, {}, '"'),
 (_Q, {}, '""'),
 (_Q, {}, 'Here you go: "The sky is blue."'),
 (_Q, {}, '"The sky" is "blue"'),
 (_Q, {}, '**"The sky is blue."**'),
 (_Q, {}, 'Sure:\n"The sky is blue."'),
 # end phrase
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done.\nIs there anything else I can help with?"),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done.\nIs there anything else I can help with?   \n\n"),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done.\nIs there anything else I can help with? "),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done. Is there anything else I can help with?**"),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done. **Is there anything else I can help with?**"),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done. Is there anything else I can help with?."),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done. Is there anything else I can help with"),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done. Is there anything else I can help with?\nBye."),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, '"Done. Is there anything else I can help with?"'),
 (_E, {"end_phrase": "Is there anything else I can help with?"}, "Done. Is there anything else I can help with?\u201d"),
 (_E, {"end_phrase": "Peace."}, "Go well. PEACE."),
 (_E, {"end_phrase": " Peace. "}, "Go well. Peace."),
 # json
 (_J, {}, '{"name": "Ada", "age": 36}'),
 (_J, {}, '```json\n{"name": "Ada", "age": 36}\n```'),
 (_J, {}, '```JSON\n{"name": "Ada"}\n```'),
 (_J, {}, '```Json\n{"name": "Ada"}\n```'),
 (_J, {}, '```\n{"name": "Ada"}\n```'),
 (_J, {}, '```json {"name": "Ada"} ```'),
 (_J, {}, '```python\n{"name": "Ada"}\n```'),
 (_J, {}, 'Here is the JSON:\n```json\n{"name": "Ada"}\n```'),
 (_J, {}, '```json\n{"name": "Ada"}\n```\nLet me know!'),
 (_J, {}, '{"name": "Ada",}'),
 (_J, {}, "{'name': 'Ada'}"),
 (_J, {}, '"just a string"'),
 (_J, {}, "42"),
 (_J, {}, '{"a": NaN}'),
 (_J, {}, '{"a": 1} {"b": 2}'),
 (_J, {}, '  \n```json\n[1, 2, 3]\n```  \n'),
 (_J, {}, '```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```'),
 # commas
 (_C, {}, "No commas here at all."),
 (_C, {}, "One, two."),
 (_C, {}, "Full-width comma，here and ideographic、here."),
 (_C, {}, "Numbers like 1,000 count."),
 (_C, {}, "Quote ',' only."),
 # lowercase / uppercase
 (_LO, {}, "hello world, this is all lowercase."),
 (_LO, {}, "hello world, this is Mostly lowercase."),
 (_LO, {}, "hello world 123 #tags"),
 (_LO, {}, "123 456"),
 (_LO, {}, "bonjour tout le monde, je suis content de vous voir."),
 (_LO, {}, "привет мир, как у тебя дела сегодня?"),
 (_LO, {}, "i love nyc."),
 (_UP, {}, "HELLO WORLD, THIS IS ALL CAPS."),
 (_UP, {}, "HELLO WORLD, THIS IS ALMOST all CAPS."),
 (_UP, {}, "HELLO WORLD 123 #TAGS"),
 (_UP, {}, "123 456"),
 (_UP, {}, "BONJOUR TOUT LE MONDE, JE SUIS CONTENT DE VOUS VOIR."),
 (_UP, {}, "ПРИВЕТ МИР, КАК У ТЕБЯ ДЕЛА?"),
 (_UP, {}, "I LOVE NYC."),
 # number words
 (_W, {"num_words": 5, "relation": "less than"}, "one two three four five"),
 (_W, {"num_words": 5, "relation": "at least"}, "one two three four five"),
 (_W, {"num_words": 6, "relation": "at least"}, "one two three four five"),
 (_W, {"num_words": 4, "relation": "at least"}, "well-known don't"),
 (_W, {"num_words": 5, "relation": "less than"}, "3.14 is π, roughly"),
 (_W, {"num_words": 3, "relation": "at least"}, "café naïve résumé"),
 (_W, {"num_words": 2, "relation": "at least"}, "日本語の文章です。"),
 (_W, {"num_words": 3, "relation": "at least"}, "snake_case_name and more"),
 (_W, {"num_words": 4, "relation": "less than"}, "--- *** ### !!!"),
 # nth paragraph first word
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"}, "Cats are fine.\n\nHowever, dogs are better."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"}, "Cats are fine.\n\n**However**, dogs are better."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"}, "Cats are fine.\n\n\"However\", dogs are better."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"}, "Cats are fine.\n\n'However' dogs are better."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"}, "Cats are fine.\nHowever, dogs are better."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"}, "Cats are fine.\n\n\n\nHowever, dogs are better."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"}, "Cats are fine.\n\n  However dogs are better.\n\n"),
 (_N, {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "however"}, "Cats are fine.\n\nHowever, dogs are better."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "cats"}, "Cats' toys are fine.\n\nDogs too."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "Cats"}, "Cats are fine.\n\nDogs too."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "cats"}, "Cats:are fine.\n\nDogs too."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "dogs"}, "Cats are fine.\n\n\n\n\nDogs too."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "dogs"}, "Cats are fine.\n \nDogs too."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "dogs"}, "Cats are fine.\n\n\n\nDogs too."),
 # highlights
 (_H, {"num_highlights": 2}, "*First* and *second* are highlighted."),
 (_H, {"num_highlights": 2}, "**First** and **second** are bold."),
 (_H, {"num_highlights": 3}, "**First** and *second* and ***third***."),
 (_H, {"num_highlights": 2}, "* bullet one\n* bullet two"),
 (_H, {"num_highlights": 1}, "Math: 2*3*4 = 24"),
 (_H, {"num_highlights": 1}, "*   * and ** **"),
 # sentences
 (_SE, {"num_sentences": 3, "relation": "less than"}, "Dr. Smith arrived at 5 p.m. on Jan. 3. He left. Bye."),
 (_SE, {"num_sentences": 3, "relation": "at least"}, "Mr. and Mrs. Jones went to the U.S. last year. It was fun! Really?"),
 (_SE, {"num_sentences": 2, "relation": "at least"}, "It costs $3.50. That's cheap... isn't it?"),
 (_SE, {"num_sentences": 3, "relation": "less than"}, "- item one\n- item two\n- item three"),
 (_SE, {"num_sentences": 2, "relation": "at least"}, "e.g. apples, i.e. fruit. Yes."),
 # keywords
 (_KF, {"keyword": "cat", "frequency": 3, "relation": "at least"}, "Cat, cats, concatenate."),
 (_KF, {"keyword": "cat", "frequency": 2, "relation": "less than"}, "A CAT and a dog."),
 (_KE, {"keywords": ["cat", "dog"]}, "Category and dogma."),
 (_KE, {"keywords": ["New York", "rain"]}, "new york in the Rain."),
 (_FW, {"forbidden_words": ["cat"]}, "A category of dogs."),
 (_FW, {"forbidden_words": ["cat"]}, "The CAT's toy."),
 (_FW, {"forbidden_words": ["cat"]}, "The cat_toy was lost."),
 (_FW, {"forbidden_words": ["ice cream"]}, "I like ice  cream."),
 # two responses / repeat prompt / constrained
 (_TR, {}, "Response one.\n******\nResponse two."),
 (_TR, {}, "Response one.\n*******\nResponse two."),
 (_TR, {}, "Response one.\n******\nResponse one."),
 (_TR, {}, "Response one.\n******\n Response one. "),
 (_RP, {"prompt_to_repeat": "Write a poem about cats."}, "Write a poem about cats.\nCats are soft."),
 (_RP, {"prompt_to_repeat": "Write a poem about cats."}, "  write a POEM about cats. Cats are soft."),
 (_RP, {"prompt_to_repeat": "Write a poem about cats."}, "Sure! Write a poem about cats.\nCats are soft."),
 (_RP, {"prompt_to_repeat": "Write a poem about cats."}, "**Write a poem about cats.**\nCats are soft."),
 (_CR, {}, "My answer is yes."),
 (_CR, {}, "My answer is Yes."),
 (_CR, {}, "After thinking: My answer is maybe. Because..."),
 (_CR, {}, "**My answer is no.**"),

 (_KF, {"keyword": "cat", "frequency": 4, "relation": "at least"}, "Cat, cats, concatenate."),
 (_KF, {"keyword": "New York", "frequency": 2, "relation": "at least"}, "New York, new york, NewYork."),
 (_KE, {"keywords": ["cat", "dog"]}, "Only a cat here."),
 (_KE, {"keywords": ["c++", "rust"]}, "I write C++ and Rust."),
 # loose mode: a preamble line, markdown stars, a closing line
 (_Q, {}, 'Sure! Here is my answer:\n"The sky is blue."\nHope that helps!'),
 (_J, {}, 'Sure! Here is the JSON:\n{"name": "Ada"}\nLet me know if you need more.'),
 (_E, {"end_phrase": "Any other questions?"}, "**Answer:** Paris.\n**Any other questions?**"),
 (_T, {}, "Sure.\n<<A Title>>\nBody."),
 (_UP, {}, "Sure, here it is:\nTHE SKY IS BLUE.\nHope it helps!"),
 (_LO, {}, "Sure, here it is:\nthe sky is blue.\nHope it helps!"),
 (_C, {}, "Sure, here it is:\nThe sky is blue.\nThanks, bye."),
 (_W, {"num_words": 5, "relation": "less than"}, "Sure here it is\nSky is blue\nThanks a lot friend"),
 (_B, {"num_bullets": 2}, "**Points:**\n* one\n* two"),
 (_B, {"num_bullets": 2}, "* intro line\n* one\n* two"),
 (_H, {"num_highlights": 2}, "Sure!\n*one* *two*\nBye."),
 (_N, {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "cats"}, "Sure!\nCats are fine.\n\nDogs too."),
 (_RP, {"prompt_to_repeat": "Write a poem about cats."}, "Sure!\nWrite a poem about cats.\nCats are soft."),
 (_SE, {"num_sentences": 2, "relation": "less than"}, "Sure. Here.\nOne sentence only.\nBye now."),
 (_P, {"num_paragraphs": 2}, "Sure.\nOne.\n***\nTwo.\nBye."),
 (_PS, {"postscript_marker": "P.S."}, "Body\nP.*S.* note"),
]
