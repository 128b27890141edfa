"""Blind cases for Midori (midori), an English plant-care robot with sensor-only perceptions.

Midori has no text perception: every case is a sensor reading (soil moisture per plant, window
light with the hour, room temperature/humidity, leaf-camera report per plant). The set covers
each event rule triggered with the right plant and a sensible amount or percent (watering
100-150 ml or 200-250 ml by dryness, shade to about 70%, moving the basil toward the window,
misting the fern, notes to the owner for soggy soil, heat, cold and pests, a diary entry for
yellow leaves); readings that should not trigger (normal values, exact thresholds, low light at
night); borderline readings just across a threshold; two plants (the reading names which one);
and readings identical to the previous one, which need nothing.
"""
from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/midori.json"


def _soil(plant: str, percent: float) -> Perception:
    return Perception(title="soil_moisture", body={"plant": plant, "percent": percent},
                      format="object")


def _light(lux: float, hour: int) -> Perception:
    return Perception(title="light", body={"lux": lux, "hour": hour}, format="object")


def _climate(temperature_c: float, humidity_percent: float) -> Perception:
    return Perception(title="climate",
                      body={"temperature_c": temperature_c, "humidity_percent": humidity_percent},
                      format="object")


def _leaf(plant: str, yellow_leaves: int, pests: str = "none") -> Perception:
    return Perception(title="leaf_camera",
                      body={"plant": plant, "yellow_leaves": yellow_leaves, "pests": pests},
                      format="object")


def _water(plant: str, low: int, high: int):
    """water that plant with an amount from low to high ml, ends included."""
    return named("water", plant=plant, ml=tuple(range(low, high + 1)))


def _note(heard: str, mentions: str, what: str):
    return speak(heard=heard, mentions=mentions, what=what, lang="en", action="notify",
                 param="message")


def _case(name, perception, check, expect, kind="event", before=None) -> Case:
    return Case(name=f"midori_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []
    c = out.append

    # ---- soil moisture: watering, two plants -----------------------------------------------
    c(_case("basil_dry_22", _soil("basil", 22),
            _water("basil", 100, 150), "water basil 100-150 ml"))
    c(_case("fern_very_dry_8", _soil("fern", 8),
            _water("fern", 200, 250), "water fern 200-250 ml"))
    c(_case("basil_borderline_29", _soil("basil", 29),
            _water("basil", 100, 150), "water basil 100-150 ml (just below 30%)"))
    c(_case("basil_at_30_no_water", _soil("basil", 30),
            nothing(), "nothing at exactly 30% (rule: below 30%)"))
    c(_case("fern_moist_55", _soil("fern", 55),
            nothing(), "nothing: normal moisture"))
    c(_case("fern_dry_after_basil_ok", _soil("fern", 20),
            _water("fern", 100, 150), "water the fern (not the basil) 100-150 ml",
            before=[_soil("basil", 60)]))
    c(_case("basil_dry_after_fern_watered", _soil("basil", 12),
            _water("basil", 200, 250), "water the basil 200-250 ml after the fern",
            before=[_soil("fern", 25)]))
    c(_case("basil_dry_unchanged", _soil("basil", 22),
            nothing(), "nothing: same reading as just handled", kind="silence",
            before=[_soil("basil", 22)]))
    c(_case("fern_waterlogged_92", _soil("fern", 92),
            _note("fern soil moisture 92%", r"fern", "a note that the fern's soil is waterlogged"),
            "notify owner the fern is waterlogged"))
    c(_case("basil_85_not_waterlogged", _soil("basil", 85),
            nothing(), "nothing at exactly 85% (rule: above 85%)"))

    # ---- light: shade and moving the basil -------------------------------------------------
    c(_case("light_harsh_45000", _light(45000, 13),
            within("set_shade", percent=(60, 80)), "set_shade about 70%"))
    c(_case("light_just_over_31000", _light(31000, 12),
            within("set_shade", percent=(60, 80)), "set_shade about 70% (just above 30000)"))
    c(_case("light_bright_normal_12000", _light(12000, 11),
            nothing(), "nothing: normal bright daylight"))
    c(_case("light_harsh_unchanged", _light(45000, 13),
            nothing(), "nothing: same reading, shade already set", kind="silence",
            before=[_light(45000, 13)]))
    c(_case("light_dim_day_600", _light(600, 10),
            named("move_pot", plant="basil", direction="toward_window", cm=tuple(range(20, 41))),
            "move basil ~30 cm toward the window"))
    c(_case("light_dark_night_5", _light(5, 22),
            nothing(), "nothing: darkness at night is normal"))
    c(_case("light_1200_day_not_dim", _light(1200, 15),
            nothing(), "nothing at 1200 lux (rule: below 1000)"))

    # ---- climate: misting and temperature notes ---------------------------------------------
    c(_case("climate_dry_air_32pct", _climate(22, 32),
            named("mist", plant="fern", seconds=tuple(range(5, 11))), "mist the fern 5-10 s"))
    c(_case("climate_comfortable", _climate(22, 55),
            nothing(), "nothing: normal temperature and humidity"))
    c(_case("climate_humidity_40_exact", _climate(21, 40),
            nothing(), "nothing at exactly 40% humidity (rule: below 40%)"))
    c(_case("climate_cold_6c", _climate(6, 50),
            _note("temperature 6 C humidity 50%", r"\b6|six|cold",
                  "a note that it is too cold (6 °C)"),
            "notify owner it is cold"))
    c(_case("climate_hot_35c", _climate(35, 50),
            _note("temperature 35 C humidity 50%", r"35|hot|heat",
                  "a note that it is too hot (35 °C)"),
            "notify owner it is hot"))
    c(_case("climate_warm_31c_ok", _climate(31, 48),
            nothing(), "nothing at 31 °C (rule: above 32)"))
    c(_case("climate_dry_unchanged", _climate(22, 32),
            nothing(), "nothing: same reading, already misted", kind="silence",
            before=[_climate(22, 32)]))

    # ---- leaf camera: pests and yellow leaves ------------------------------------------------
    c(_case("leaf_basil_aphids", _leaf("basil", 0, "aphids"),
            _note("basil aphids", r"basil.*aphid|aphid.*basil", "a note naming the basil and aphids"),
            "notify owner of aphids on the basil"))
    c(_case("leaf_fern_yellow_4", _leaf("fern", 4),
            named("log_reading", plant="fern"), "log_reading for the fern"))
    c(_case("leaf_basil_yellow_2", _leaf("basil", 2),
            nothing(), "nothing: 2 yellow leaves is normal (rule: 3 or more)"))
    c(_case("leaf_fern_yellow_unchanged", _leaf("fern", 4),
            nothing(), "nothing: same report, already in the diary", kind="silence",
            before=[_leaf("fern", 4)]))
    return out
