"""Rule-based short answers: one hand-made case per rule, then the real validation file."""

from __future__ import annotations

import json

import pytest

from devtools.bench.bench_short_answers import SHORT_ANSWERS, SPLITS, score
from pipeline.release.short_answers import ShortAnswers, short_answers_generate
from pipeline.release.short_answers.rules import (
    MAX_ANSWERS,
    int_to_words,
    primary_answer,
    strip_question_words,
    words_to_int,
)


def rules(question: str, elements: list[str], full_answer: str = "", **kwargs) -> list[str]:
    result = short_answers_generate(
        question=question, elements=elements, full_answer=full_answer, backend="rules", **kwargs
    )
    assert result.source == "rules"
    assert len(result.answers) == len(set(result.answers)), "duplicates"
    return result.answers


def test_single_element_is_the_primary_answer():
    assert rules("What is the app name?", ["Yummly"]) == ["Yummly"]


def test_elements_joined_in_order_as_one_phrase_when_the_full_answer_says_so():
    # given a name split over two elements, written as one phrase in the full answer
    answers = rules("What is the name?", ["Jon", "Brown"], "The name is Jon Brown.")
    # then the primary uses every element, in order, joined by a space (the paper's A.6 example)
    assert answers == ["Jon Brown"]


def test_elements_joined_as_a_list_otherwise():
    answers = rules("What are the login options?", ["Facebook", "EMAIL"], "You can log in with Facebook or email.")
    assert answers[0] == "Facebook, EMAIL"
    assert "Facebook and EMAIL" in answers
    assert "Facebook or EMAIL" in answers
    three = rules("Which apps can share?", ["Email", "Bluetooth", "Messaging"], "Several apps.")
    assert three[:2] == ["Email, Bluetooth, Messaging", "Email, Bluetooth and Messaging"]


def test_a_label_or_unit_copied_from_the_question_is_dropped_around_a_bare_value():
    # given an element that repeats the question's label
    answers = rules("What is the price?", ["Price: $3.00"])
    # then the primary drops it, the element text stays as a variant
    assert answers[:2] == ["$3.00", "Price: $3.00"]
    assert primary_answer("3 reviews", "How many reviews does it have?") == "3"
    assert primary_answer("ID 416", 'What is the ID of "Leather Horse Armor"?') == "416"
    assert primary_answer('"All" tab', "Which tab is selected?") == '"All"'
    assert primary_answer("(2,172)", "How many people have rated it?") == "2,172"
    # and the trimmed text is still offered where it names something
    assert "English" in rules("Which language is chosen?", ["English language"])


@pytest.mark.parametrize(
    ("question", "element"),
    [
        # issue 11: trimming the question's words cut the answer itself
        ("How many points are there?", "no points"),  # was "no"
        ("Which chakra healing will be started?", "the sacral chakra"),  # was "the sacral"
        ("What is the title of the video?", '"What Is Ceaser Going To Do About Ted?" video'),  # a question as title
        ("What is the headline?", "What could be lurking in your child's lunch bag? Mold, E. coli and fecal bacteria"),
        ("What is the mentioned city?", "Rapid City"),
        ("What is the name of the bank?", "Bank of America"),
        ("Which day comes on February 5?", "February 5th is a Sunday"),
    ],
)
def test_trimming_never_cuts_the_answer(question, element):
    answers = rules(question, [element])
    assert answers[0] == element
    assert strip_question_words("Royal Bank of Canada", "Which bank?") == "Royal Bank of Canada"
    assert strip_question_words("Settings", "Which settings?") == "Settings"  # never down to nothing


def test_trimmed_fragments_are_not_offered():
    answers = rules("Which chakra healing will be started?", ["the sacral chakra"])
    assert "the sacral" not in answers and "sacral" not in answers
    # "no" is never the primary of "no points" (issue 11's cut); it is offered only after the other
    # counts of nothing, as the release writes it ("How many surveys are found?" -> "no")
    points = rules("How many points are there?", ["no points"])
    assert points[0] == "no points"
    assert points.index("no") > points.index("none")


def test_number_formats_digits_and_words():
    assert rules("What is the number of schools?", ["22"])[:3] == ["22", "twenty-two", "twenty two"]
    assert {"3", "three"} <= set(rules("How many?", ["three"]))
    # decimals in words, both ways
    assert "four point three stars" in rules("How many stars are showing?", ["4.3 stars"])
    assert "4.3 stars" in rules("How many stars are showing?", ["four point three stars"])
    # "128 bits" / "128-bit"; thousands written with a scale word or a K
    assert "128-bit" in rules("What is the encryption?", ["128 bits"])
    assert {"13,000", "13 thousand", "thirteen thousand"} <= set(rules("What is the total?", ["13K"]))
    assert "445733" in rules("How many quitters joined?", ["445 thousand and 733"])
    assert int_to_words(110) == "one hundred and ten"
    assert int_to_words(1_000_000) == "one million"
    assert words_to_int("one hundred and ten") == 110
    assert words_to_int("a hundred") == 100
    assert words_to_int("banana") is None


def test_ordinals_and_the_questions_noun_before_a_number():
    answers = rules("Which page am I on?", ["the first page"])
    assert {"1", "1st", "page 1", "first page"} <= set(answers)
    assert "version 2.96" in rules("What is the version?", ["2.96"])
    assert "the year 2017" not in rules("What is the copyright?", ["2017"])


def test_optional_units():
    # given "3 reviews" for a question that names the unit
    answers = rules("How many reviews does it have?", ["3 reviews"])
    # then the bare number is the primary and every spelling is there
    assert answers[0] == "3"
    assert {"3 reviews", "three", "three reviews"} <= set(answers)
    # and a unit the question does not name is kept in the primary, dropped in a variant
    answers = rules("How far is the station?", ["4,929.75 miles"])
    assert answers[0] == "4,929.75 miles"
    assert {"4929.75 miles", "4,929.75", "4929.75", "4929.75 mi"} <= set(answers)
    # unit symbols and names (pint), singular and plural (inflect)
    assert "3.3 miles" in rules("What is the distance?", ["3.3 mi"])
    assert "3.3 mis" not in rules("What is the distance?", ["3.3 mi"])
    assert "102 kg" in rules("What is the weight?", ["102 kilograms"])
    assert {"18 years old", "18 years"} <= set(rules("What is the age of Laura?", ["18"]))


def test_how_many_adds_the_counted_noun_as_an_optional_unit():
    answers = rules("How many followers are there?", ["88,210"])
    assert answers[0] == "88,210"
    assert {"88210", "eighty-eight thousand two hundred and ten", "88,210 followers"} <= set(answers)
    assert "22 rounds" in rules("How many total rounds are there?", ["22"])
    assert "3 people" in rules("How many people downloaded it?", ["3"])
    assert "28 minutes ago" in rules("How many minutes ago was it posted?", ["28"])


def test_counts_of_nothing():
    answers = rules("How many points are there?", ["no points"])
    assert {"0", "zero", "none", "zero points"} <= set(answers)
    assert "no items" in rules("How many items are in the cart?", ["zero items"])
    assert "free" in rules("What is the shipping charge?", ["no charge"])


def test_nothing_in_longer_texts_and_any_questions():
    # a longer "no ..." text gets the bare forms and its noun in both numbers
    records = rules("Are there any records?", ["no records found"])
    assert {"no", "none", "0", "no record found", "no records", "no record"} <= set(records)
    assert {"no rating yet", "no"} <= set(rules("Is there any rating available?", ["no ratings yet"]))
    # "Is/Are there any <noun>" names the counted noun
    assert {"no item", "no items"} <= set(rules("Is there any item added to a cart?", ["0"]))
    assert {"0", "none", "no items"} <= set(rules("How many items are in the wish list?", ["empty"]))
    # "no one ..." is a person, not a count
    assert "0" not in rules("Who accesses the private photos?", ["no one can view"])


def test_comparators():
    answers = rules("How many people downloaded it?", ["500,000+"])
    assert {"over 500,000", "more than 500,000", "500,000 or more"} <= set(answers)
    assert "more than 200" in rules("In how many stores?", ["over 200"])
    assert "7 or more" in rules("What is the minimum score?", ["at least 7"])


def test_comparators_written_after_the_value():
    assert {"at least 200", "200 or more", "200 and above", "200+"} <= set(rules("How many situps?", ["200 and over"]))
    assert {"18 and above", "18 years or more", "at least 18 years"} <= set(
        rules("What is the age range?", ["18 years and above"])
    )
    assert {"7 or higher", "7"} <= set(rules("What is the minimum score to pass?", ["at least 7"]))
    assert "5 or fewer" in rules("How many rooms?", ["5 or less"])


def test_currency_and_percent():
    answers = rules("How much can I earn?", ["$3.00"])
    assert answers[0] == "$3.00"
    assert {"3 dollars", "three dollars", "3.00", "3"} <= set(answers)
    answers = rules("What is the price?", ["$7.60"])
    assert {"7.60 dollars", "7 dollars and 60 cents", "seven dollars and sixty cents"} <= set(answers)
    assert "$119.99" in rules("What is the cost?", ["one hundred nineteen dollars and ninety nine cents"])
    assert "49.00 dirhams" in rules("What is the minimum order?", ["49.00 AED"])  # babel's CLDR names
    assert "100€" in rules("What is the price?", ["€100"])
    assert {"95", "95 percent", "95 %", "ninety-five percent"} <= set(rules("What is the humidity?", ["95%"]))
    assert "100 percent" in rules('What is the percentage of "Bonus Gold"?', ["100"])
    assert "$142" in rules("What is the cost per night?", ["142"])


def test_us_dollars_and_amounts_with_cents():
    assert {"$50", "50 USD", "US $50"} <= set(rules("What is the current bid price?", ["50 US dollars"]))
    assert "218.05 USD" in rules("What is the expense amount?", ["$218.05"])
    # two decimals read as money; "0.00" is no clock time
    assert {"$6,634.00", "6,634.00 dollars"} <= set(rules("What is the total amount given?", ["6,634.00"]))
    assert "12:00 AM" not in rules("How much money is saved?", ["0.00"])


def test_prices_said_aloud():
    assert {"$39.95", "39.95 dollars"} <= set(rules("What is the price?", ["thirty-nine ninety-five dollars"]))
    assert {"$1.20", "1.20 dollars"} <= set(rules("What is the cost?", ["one dollar twenty"]))


def test_time_zone_optional_and_durations_with_their_unit():
    assert "6:30 pm" in rules("What is the time for the match?", ["6:30 pm Eastern Time"])
    assert "1:44 minutes" in rules("What is the duration?", ["1 minute and 44 seconds"])
    assert {"00:33 seconds", "00 minutes and 33 seconds"} <= set(rules("What is the duration?", ["33 seconds"]))


def test_a_signed_percentage_without_its_sign():
    assert {"50%", "50 percent"} <= set(rules('What is the discount on "FOSSIL ME3131"?', ["-50%"]))


def test_degree_symbol_spaced_and_left_or_remaining():
    assert {"10 °C", "10 Celsius"} <= set(rules("What is the temperature given?", ["10 degrees Celsius"]))
    assert "1 hour and 8 minutes remaining" in rules("How much time is left?", ["1 hour and 8 minutes left"])


def test_mixed_numbers_and_dimensions():
    assert {"4.5 stars", "4.5", "four and a half stars"} <= set(rules("What is the rating?", ["4 1/2 stars"]))
    assert {"1440 x 2392", "1440x2392 pixels"} <= set(rules("What is the size of the screen?", ["1440 by 2392 pixels"]))


def test_degrees():
    answers = rules("What is the temperature?", ["63° F"])
    assert {"63°F", "63 degrees Fahrenheit", "63°", "63"} <= set(answers)
    assert "38°" in rules("What is the temperature?", ["38 degrees"])


@pytest.mark.parametrize("given", ["May 5, 2017", "5 May 2017", "2017-05-05", "05/05/2017", "May 5th, 2017"])
def test_date_formats(given):
    answers = rules("What is the date?", [given])
    assert answers[0] == given
    assert {"May 5, 2017", "5 May 2017", "2017-05-05", "Friday, May 5, 2017", "May 5th", "5/5/17"} <= set(answers)


def test_date_with_weekday_short_year_and_without_year():
    answers = rules("What is the departure date?", ["Sat, 22 April 2017"])
    assert {"April 22, 2017", "Saturday, April 22, 2017", "22 April 2017"} <= set(answers)
    answers = rules("What is the departure date?", ["April 22"])
    assert {"22 April", "April 22nd"} <= set(answers)
    assert "March 21, 2017" in rules("What is the scheduled date?", ["3/21/17"])
    assert "21st of March, 2017" in rules("What is the scheduled date?", ["3/21/17"])
    # not a date: left alone
    assert rules("What is the code?", ["13/45/2017"]) == ["13/45/2017"]


def test_date_with_the_weekday_added_or_abbreviated_and_day_first():
    answers = rules("What is the departure date?", ["22 April 2017"])
    assert {"Sat, 22 Apr 2017", "Saturday, April 22", "22 April", "2017 Sat, Apr 22", "22/4/2017"} <= set(answers)
    assert {"22.04.2017", "Saturday, Apr 22, 2017"} <= set(answers)
    answers = rules("What is the date?", ["Tue, 06 December"])
    assert {"December 6, Tuesday", "December 6th, Tuesday", "Tuesday, 6 December"} <= set(answers)
    # a version number is no date
    assert not any("2012" in a for a in rules("What is the version?", ["4.2.12"]))


def test_date_split_over_elements():
    answers = rules("When?", ["Oct.", "15", "2024"], "It is on Oct. 15 2024.")
    assert answers[0] == "Oct. 15 2024"
    assert {"October 15, 2024", "2024-10-15"} <= set(answers)


def test_date_and_time_together():
    answers = rules("When was it posted?", ["April 6, 2017, at 8:19 PM"])
    assert {"April 6, 2017, 8:19 PM", "8:19 PM, April 6, 2017", "April 6, 2017 at 8:19 p.m."} <= set(answers)


def test_clock_times():
    assert {"2:24 AM", "2:24 a.m.", "2:24 am", "02:24 AM"} <= set(rules("What's the time?", ["2:24 a.m."]))
    assert "1:37 PM" in rules("What is the time of the reminder?", ["13:37"])
    answers = rules("What are the store hours?", ["9:30 AM to 6:00 PM"])
    assert {"between 9:30 AM and 6:00 PM", "9:30 AM - 6:00 PM", "from 9:30 AM to 6:00 PM"} <= set(answers)


def test_durations():
    # "00:04" / "4 seconds" (the issue's example), both ways
    assert {"4 seconds", "0:04"} <= set(rules("How long is the recording?", ["00:04"]))
    assert {"0:04", "00:04"} <= set(rules("How long is the recording?", ["4 seconds"]))
    answers = rules("How long is the video?", ["1 minute and 56 seconds"])
    assert {"1:56", "1 minute 56 seconds", "one minute and fifty-six seconds"} <= set(answers)
    assert "between 1 minute and 56 seconds" not in answers  # no range of a duration
    assert {"45 minutes", "45 mins"} <= set(rules("How much time will it take?", ["45 min"]))
    assert "7 months and 30 days" in rules("How much time is left?", ["7 months 30 days"])
    assert "0 minutes" in rules("What is the total meditation time?", ["zero minutes"])


def test_durations_in_words_zero_parts_and_clock_readings_with_a_unit():
    played = rules("How much of the song has been played?", ["one minute and twenty seconds"])
    assert {"1 minute and 20 seconds", "1:20"} <= set(played)
    assert {"0:04", "4 seconds"} <= set(rules("What is the length of the song?", ["0:04 seconds"]))
    assert "1 minute and 0 seconds" in rules("What is the time duration of the video?", ["1:00"])
    assert {"13 hours and 0 minutes", "13h 0m"} <= set(rules("What is the duration of travel?", ["13 hours 0 minutes"]))
    assert {"12 hours", "12 hrs"} <= set(rules("When was it posted?", ["12 hours ago"]))


def test_clock_without_its_half_and_said_with_the_part_of_the_day():
    assert "12:47" in rules("What is the time?", ["12:47 a.m."])
    assert {"12:52 AM", "12:52"} <= set(rules("What is the time showing?", ["12:52 in the morning"]))
    assert "9:30am to 6:00pm" in rules("What are the Monday store hours?", ["9:30 AM to 6:00 PM"])


def test_phone_formats():
    answers = rules("What is the phone number?", ["(415) 579-1543"])
    assert {"415-579-1543", "+1 415-579-1543", "4155791543", "+14155791543"} <= set(answers)
    assert "(415) 579-1543" in rules("What is the phone number?", ["+1 415 579 1543"])


def test_list_rewording():
    answers = rules("Which apps can share?", ["Email, Bluetooth and Messaging"])
    assert {"Email, Bluetooth, Messaging", "Email, Bluetooth, and Messaging", "Email, Bluetooth or Messaging"} <= set(
        answers
    )
    assert '"Email", "Bluetooth" and "Messaging"' in answers
    answers = rules("Which options are there?", ['"Play Store", "Browser"'])
    assert {"Play Store and Browser", '"Play Store" and "Browser"'} <= set(answers)
    # a place is not a list, a date is not a list
    assert rules("What is the location?", ["San Francisco, CA"]) == ["San Francisco, CA"]
    assert not any(" and " in a for a in rules("What is the date?", ["May 5, 2017"]))


def test_words_added_from_the_question():
    assert {'"History" option', "History option"} <= set(rules("Which option is selected?", ["History"]))
    assert "Google application" in rules("Using which application can we create an account?", ["Google"])


def test_question_noun_after_of_and_app_synonyms():
    # "the <noun> of/in ..." names the kind of thing, "the name of the application" the application
    assert '"ALL" option' in rules('What is the selected option in "Love Stickers"?', ["ALL"])
    assert "version 1.1.6" in rules("What is the version of the application?", ["1.1.6"])
    # "app" and "application" stand for one another
    assert "PINK" in rules("Which application is asking for permissions?", ['"PINK" app'])
    assert "Facebook" in rules("What application is used to sign in?", ["Facebook app"])
    assert '"Fast Messenger" app' in rules("Which application will receive it?", ['"Fast Messenger" application'])


def test_the_question_noun_wherever_the_question_names_it():
    assert '"Screen Timeout" option' in rules("10 minutes is for which option?", ["Screen Timeout"])
    assert '"route" option' in rules("What is the option selected?", ["route"])
    assert "version 4.2.12" in rules('What version of "Rain Alarm" is being used?', ["4.2.12"])
    # the release writes a version number both ways round
    assert "2.1.2 version" in rules("What is the version?", ["2.1.2"])


def test_a_leading_preposition_is_optional():
    assert "Facebook" in rules("How can we connect?", ["via Facebook"])
    assert "Travers Mackel" in rules("By whom is the article written?", ["By Travers Mackel"])
    # the rest gets its own variants: "for 30 days" -> "30 days" -> "30"
    assert {"30 days", "30"} <= set(rules("How many days is shipping free?", ["for 30 days"]))


def test_a_numbered_thing_as_an_ordinal():
    assert {"first page", "the first page", "1st page", "page one"} <= set(rules("On which page am I?", ["page 1"]))


def test_two_names_with_a_comma_are_a_list_but_a_place_is_not():
    assert "Play Store and Browser" in rules("Which application can I use?", ["Play Store, Browser"])
    assert "Napoli and Barcelona" in rules("What is the name of the team at the top?", ["Napoli, Barcelona"])
    assert "San Francisco and CA" not in rules("What is the location?", ["San Francisco, CA"])
    assert "Paris and France" not in rules("What is the location?", ["Paris, France"])


def test_ratings():
    assert {"4.1 stars", "4.1 out of 5", "4.1 out of 5 stars"} <= set(
        rules("What is the rating of Hotel Kabuki?", ["4.1"])
    )
    assert {"4 out of 5 stars", "4.0 stars", "4-star"} <= set(rules("What is the rating?", ["4 stars"]))
    assert "4 stars" not in rules("How many reviews are there?", ["4"])


def test_ages_in_words_and_the_questions_trailing_word():
    assert "twenty-nine years old" in rules("What is the age of L. Messi?", ["29"])
    assert "13 days left" in rules("How many days are left?", ["13 days"])
    assert "29 seconds long" in rules("What is the duration of the video?", ["29 seconds"])
    assert "4.0 miles away" in rules("How far is Beth?", ["4.0 miles"])
    assert "70% off" in rules("What is the discount for glasses?", ["70 percent"])
    # not after a name: the suffix follows values only
    assert "Facebook left" not in rules("Which app is on the left?", ["Facebook"])


def test_small_format_families():
    # percent as "per cent", "a hundred", symbols stuck to the number, glued duration units
    assert "94 per cent" in rules("What percentage of people liked it?", ["94%"])
    assert "a hundred" in rules("How many boats are there?", ["100 boats"])
    assert "0.00km" in rules("What is the distance?", ["0.00 km"])
    assert {"7min", "7mins"} <= set(rules("What is the time of a full workout?", ["7 minutes"]))
    # a comparator the release leaves out
    assert {"7", "7 points"} <= set(rules("What is the minimum score to pass?", ["at least 7 points"]))
    # a counted noun with a modifier, also alone
    assert {"22 nearby schools", "22 schools"} <= set(rules("How many nearby schools are there?", ["22"]))


def test_units_pint_misreads_are_left_alone():
    # pint reads "points" as the typographic point and "units" as micro-"nits": neither is offered
    assert not any(a.endswith(("pp", "nits")) for a in rules("How many points?", ["7 points"]))
    assert not any("micro" in a or "µ" in a for a in rules("What is the volume set at?", ["14 units"]))
    assert "189.2 pounds" in rules("What is the ideal weight?", ["189.2 lbs"])


def test_optional_marks_brackets_urls_and_version_prefixes():
    assert "ServiceMaster" in rules("This application is sponsored by whom?", ["ServiceMaster®"])
    assert {"Bari", "BRI"} <= set(rules("What is the starting point?", ["Bari (BRI)"]))
    assert "runtastic.com" in rules("Which URL is displayed?", ["www.runtastic.com"])
    assert "2.1.7" in rules("Which build is used?", ["v2.1.7"])
    assert rules("What is the version of the software?", ["Version 3.7.0.1"])[0] == "3.7.0.1"


def test_numbered_things_fractions_and_ages_with_a_unit():
    assert {"gate 9", "gate number 9"} <= set(rules("What is the gate number?", ["9"]))
    assert "94114 zip code" in rules("What is the zip code?", ["94114"])
    assert "the year 1995" in rules("In what year did she make her debut?", ["1995"])
    assert {"5 out of 10", "5 of 10"} <= set(rules("What is the average rating?", ["5/10"]))
    assert "48 years old" in rules("What is the age?", ["48 years"])
    # a bare number is no phone number unless the question asks for one
    assert not any(a.startswith("+1") for a in rules("What is the item ID?", ["1932307"]))
    assert "+1 415-579-1543" in rules("What is the phone number?", ["4155791543"])


def test_a_single_option_named_with_and_gets_the_noun():
    assert '"Eggs and dairy" option' in rules("Which option is selected?", ["Eggs and dairy"])


def test_comparator_signs_related_comparators_and_totals():
    assert "less than $25,000" in rules("What is the selected amount?", ["<$25,000"])
    assert "more than 100,000" in rules("How many requests are sent?", ["at least 100,000"])
    assert "more than 700 million" in rules("How many users are there?", ["700 million and above"])
    assert "no bids left" in rules("How many bids are left?", ["0 bids left"])
    assert {"7 total", "a total of 7"} <= set(rules("How many total branches does it have?", ["7"]))
    assert "10" in rules("How many total files are there?", ["a total of 10"])
    assert "1 AM" in rules("What is the departure time?", ["1:00 AM"])


def test_plausible_sizes():
    # no junk explosion: a date, an amount and a plain name stay within bounds
    assert len(rules("What is the date?", ["Sat, 22 April 2017"])) <= MAX_ANSWERS
    assert len(rules("What is the app name?", ["Straight Talk"])) <= 2
    assert "1 fifty" not in rules("What is the price?", ["one fifty"])


def test_trailing_period_and_leading_article_are_optional():
    assert rules("What do we need to enable?", ["location services."]) == ["location services.", "location services"]
    assert "year 1975" in rules("When was it first published?", ["the year 1975"])


def test_checkbox_states():
    assert rules('What is the status of "Accept cookies"?', ["on"])[:2] == ["on", "enabled"]
    assert {"off", "disabled", "unchecked", "not selected"} <= set(
        rules('What is the state of "PRIVACY LOCK"?', ["off"])
    )
    assert "on" in rules('What is the status of "Alerts"?', ["enabled"])


def test_more_switch_state_words():
    assert {"off", "disabled"} <= set(rules('What is the status of "Send an email each time"?', ["deselected"]))
    assert {"on", "enabled"} <= set(rules('What is the status of "Air & Rail"?', ["activated"]))


def test_a_unit_said_alone():
    assert "kg" in rules("What is the unit of weight?", ["kilograms"])
    assert {"°F", "Fahrenheit"} <= set(rules("What is the unit of temperature?", ["degrees Fahrenheit"]))
    assert "miles per hour" in rules("What is the unit of wind speed?", ["Mph"])
    assert {"lb", "lbs"} <= set(rules("What is the unit of weight?", ["pounds"]))


def test_the_unit_the_question_asks_in_and_a_labelled_quoted_name():
    assert {"141 lbs", "141 pounds"} <= set(rules("What is the weight in lbs?", ["141"]))
    assert "43 Fahrenheit" in rules("What is the NY city temperature in Fahrenheit?", ["43"])
    answers = rules("What is the number 874 for?", ['the category "Asphalt Oval Racing Cars"'])
    assert {'"Asphalt Oval Racing Cars"', "Asphalt Oval Racing Cars"} <= set(answers)
    assert 'the category "Asphalt Oval Racing Cars' not in answers  # never half a pair of quotes
    # "away" follows the count, it is not what is counted
    assert "3950927 feet" in rules("How many feet away is the station?", ["3950927"])


def test_lists_with_the_conjunction_everywhere_and_two_items_either_way():
    assert {"low and medium and high", "low, medium, high"} <= set(
        rules("What are the options given?", ["low, medium and high"])
    )
    assert "Barcelona and Napoli" in rules("Which teams are at the top?", ["Napoli and Barcelona"])
    assert "1 hour and 29 minutes and 55 seconds" in rules(
        "What is the time duration?", ["1 hour 29 minutes and 55 seconds"]
    )


def test_ages_and_age_limits():
    assert {"17 and older", "17 years and above", "over 17"} <= set(rules("What is the age limit to read it?", ["17+"]))
    assert "seventeen+" not in rules("What is the age limit to read it?", ["17+"])
    assert {"30 years", "30 years old"} <= set(rules("What is the age?", ["thirty years old"]))
    assert {"18 and above", "18 years or older"} <= set(rules("What is the age limit?", ["at least 18 years old"]))


def test_the_noun_for_longer_names_and_a_leading_for_or_in():
    assert '"Use Current Location" option' in rules(
        "Which option is selected to set the location?", ["Use Current Location"]
    )
    assert "for 24 hours" in rules("How long will this offer be available?", ["24 hours"])
    assert "in 6 days" in rules("In how many days is the marathon?", ["6 days"])


def test_a_name_without_the_kind_after_it():
    assert {'"Side Dishes"', "Side Dishes"} <= set(rules("Which is the selected dish?", ['"Side Dishes" category']))
    assert "GPS" in rules("What features allow the user to locate?", ["GPS feature"])
    assert "mysanfordchart.org" in rules("Which site do I have to visit?", ["mysanfordchart.org website"])


def test_countries_by_name_and_iso_code():
    assert {"US", "USA", "U.S.", "United States of America"} <= set(rules("What is the country?", ["United States"]))
    assert {"United Kingdom", "U.K."} <= set(rules("Which country is selected?", ["UK"]))
    assert "DDR" not in rules("Which country is selected?", ["Germany"])  # a retired code
    assert "MEX" in rules("Which country is selected?", ["Mexico"])
    # codes only in capitals, and a bare two-letter one only when it is the initials
    assert "Andorra" not in rules("What is the conjunction?", ["and"])
    assert "Canada" not in rules("What is the state?", ["CA"])
    assert "United States" in rules("What is the country?", ["US"])


def test_o_clock_counted_time_units_and_a_noun_in_either_number():
    assert "6 o'clock" in rules("What is the mentioned time?", ["6 p.m."])
    assert "8 o'clock" in rules("What time is the alert set for?", ["8:00 a.m."])
    assert {"18h", "18 hours"} <= set(rules("How many hours ago did it post?", ["18"]))
    assert "dollars" in rules("What is the currency of the money earned?", ["dollar"])


def test_quotes_are_optional():
    assert rules("What is playing?", ['"NRJ Hits"']) == ['"NRJ Hits"', "NRJ Hits"]
    assert {'"NRJ Hits" song', "NRJ Hits"} <= set(rules("Which song is playing?", ['"NRJ Hits"']))


def test_not_answerable_and_empty_elements():
    assert rules("What is the phone number?", ["555"], not_answerable=True) == ["<no answer>"]
    assert rules("What is the phone number?", []) == ["<no answer>"]
    assert rules("What is the phone number?", ["  ", ""]) == ["<no answer>"]


def test_deterministic():
    kwargs = {"question": "What is the date?", "elements": ["May 5, 2017"], "full_answer": "It is May 5, 2017."}
    assert short_answers_generate(**kwargs) == short_answers_generate(**kwargs)
    assert isinstance(short_answers_generate(**kwargs), ShortAnswers)


def test_unknown_backend_is_an_error(monkeypatch):
    with pytest.raises(ValueError, match="unknown short-answer backend"):
        short_answers_generate(question="q", elements=["a"], full_answer="a", backend="magic")
    monkeypatch.setenv("SHORT_ANSWERS_BACKEND", "magic")
    with pytest.raises(ValueError, match="unknown short-answer backend"):
        short_answers_generate(question="q", elements=["a"], full_answer="a")


def _real(split: str) -> list[dict]:
    path = SHORT_ANSWERS / f"{split}.json"
    if not path.is_file():
        pytest.skip(f"real short answers not found at {path}")
    return json.loads(path.read_text())


@pytest.mark.realdata
@pytest.mark.parametrize("split", SPLITS)
def test_real_release_proxy(split):
    # given every real question, its first listed answer as the element text (the proxy of
    # docs/short_answers.md), when the rules run, then
    figures = score(_real(split))
    print(f"\n{split}: {json.dumps({k: v for k, v in figures.items() if k != 'primary_outside_examples'})}")
    assert figures["not_answerable_ok"] == figures["questions"] - figures["answerable"]
    # fewer than 0.5% of primaries are outside the real list (issue 11; 3% before)
    assert figures["primary_outside_list"] < 0.005
    # the recall measured when this was written, less a margin (23-24% before issue 11, 54.6-56.1% after
    # round 2 of its section 5; docs/short_answers.md)
    assert figures["recall"] > 0.53
    assert figures["answers_per_question_mean"] < 8


@pytest.mark.realdata
def test_real_trimming_bugs_of_issue_11_are_gone():
    records = _real("validation")
    quoted = {("no points", "How many points are there?"), ("the sacral chakra", None)}
    seen = 0
    for record in records:
        first = record["ground_truth"][0]
        for text, question in quoted:
            if first == text and (question is None or record["question"] == question):
                seen += 1
                answers = rules(record["question"], [first], f"The answer is {first}.")
                assert answers[0] == first
    assert seen >= 2
