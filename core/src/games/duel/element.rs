//! The six elements of the Duel and how they stand to each other on the circle
//! Water → Fire → Thunder → Wind → Earth → (Water): which ones conflict (RULES D-3) and
//! which are opposite (RULES D-6), plus their names in English and Chinese and their colour.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::text::Hue;

/// An element a wizard evokes: five base elements on the circle, and Void.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Element {
    /// 水, first on the circle.
    Water,
    /// 火.
    Fire,
    /// 雷.
    Thunder,
    /// 风.
    Wind,
    /// 土, last on the circle (next to Water again).
    Earth,
    /// 虚无, the special element: not on the circle, not counted in a spell's level.
    Void,
}

impl Element {
    /// Every element: the circle in order, then Void.
    pub const ALL: [Element; 6] =
        [Element::Water, Element::Fire, Element::Thunder, Element::Wind, Element::Earth, Element::Void];

    /// The base elements in circle order.
    pub const BASE: [Element; 5] =
        [Element::Water, Element::Fire, Element::Thunder, Element::Wind, Element::Earth];

    /// True for the five elements on the circle (not Void).
    pub fn is_base(self) -> bool {
        self != Element::Void
    }

    /// The place on the circle, 0 (Water) to 4 (Earth); None for Void.
    fn circle_place(self) -> Option<usize> {
        Element::BASE.iter().position(|e| *e == self)
    }

    /// The two circle neighbours of a base element (the one before, the one after);
    /// None for Void.
    pub fn neighbours(self) -> Option<[Element; 2]> {
        let place = self.circle_place()?;
        let n = Element::BASE.len();
        Some([Element::BASE[(place + n - 1) % n], Element::BASE[(place + 1) % n]])
    }

    /// The word players type and the snapshot uses (`fire`).
    pub fn word(self) -> &'static str {
        match self {
            Element::Water => "water",
            Element::Fire => "fire",
            Element::Thunder => "thunder",
            Element::Wind => "wind",
            Element::Earth => "earth",
            Element::Void => "void",
        }
    }

    /// The English name (`Fire`).
    pub fn name(self) -> &'static str {
        match self {
            Element::Water => "Water",
            Element::Fire => "Fire",
            Element::Thunder => "Thunder",
            Element::Wind => "Wind",
            Element::Earth => "Earth",
            Element::Void => "Void",
        }
    }

    /// The word a player types in `language` (`fire`, `火`).
    pub fn typed_in(self, language: crate::language::Language) -> &'static str {
        match language {
            crate::language::Language::En => self.word(),
            crate::language::Language::ZhCn => self.chinese(),
        }
    }

    /// The name shown to a reader of `language` (`Fire`, `火`): boards and the site.
    pub fn name_in(self, language: crate::language::Language) -> &'static str {
        match language {
            crate::language::Language::En => self.name(),
            crate::language::Language::ZhCn => self.chinese(),
        }
    }

    /// The Chinese name from the original rules (`火`).
    pub fn chinese(self) -> &'static str {
        match self {
            Element::Water => "水",
            Element::Fire => "火",
            Element::Thunder => "雷",
            Element::Wind => "风",
            Element::Earth => "土",
            Element::Void => "虚无",
        }
    }

    /// A small symbol shown before the name in announcements.
    pub fn symbol(self) -> &'static str {
        match self {
            Element::Water => "💧",
            Element::Fire => "🔥",
            Element::Thunder => "⚡",
            Element::Wind => "💨",
            Element::Earth => "🪨",
            Element::Void => "🕳",
        }
    }

    /// The colour the element is shown in where the network has colours.
    pub fn hue(self) -> Hue {
        match self {
            Element::Water => Hue::Blue,
            Element::Fire => Hue::Red,
            Element::Thunder => Hue::Yellow,
            Element::Wind => Hue::Green,
            Element::Earth => Hue::Brown,
            Element::Void => Hue::Grey,
        }
    }
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// True when `b` may not directly follow `a` in a spell. RULES D-3: a base element
/// conflicts with its two circle neighbours; Void conflicts only with Void. The relation
/// is symmetric.
pub fn conflicts(a: Element, b: Element) -> bool {
    match (a, b) {
        (Element::Void, Element::Void) => true,
        (Element::Void, _) | (_, Element::Void) => false,
        _ => a.neighbours().is_some_and(|n| n.contains(&b)),
    }
}

/// True when `a` and `b` are opposite for a Full Counter. RULES D-6: two base elements
/// that conflict (circle neighbours); Void is opposite to nothing.
pub fn opposite(a: Element, b: Element) -> bool {
    a.is_base() && b.is_base() && conflicts(a, b)
}

/// The elements that may directly follow `a` (RULES D-3), in circle order.
pub fn may_follow(a: Element) -> Vec<Element> {
    Element::ALL.into_iter().filter(|b| !conflicts(a, *b)).collect()
}

#[cfg(test)]
mod tests {
    use super::Element::*;
    use super::*;

    #[test]
    fn d3_base_elements_conflict_with_both_circle_neighbours() {
        // RULES D-3
        let pairs = [(Water, Fire), (Fire, Thunder), (Thunder, Wind), (Wind, Earth), (Earth, Water)];
        for (a, b) in pairs {
            assert!(conflicts(a, b), "{a} {b}");
            assert!(conflicts(b, a), "{b} {a}");
        }
        // Water may be followed by Water, Thunder or Wind (the seed's own example), and Void.
        assert_eq!(may_follow(Water), vec![Water, Thunder, Wind, Void]);
        assert!(!conflicts(Fire, Wind));
        assert!(!conflicts(Fire, Fire));
    }

    #[test]
    fn d3_void_conflicts_only_with_void() {
        // RULES D-3
        assert!(conflicts(Void, Void));
        for e in Element::BASE {
            assert!(!conflicts(Void, e));
            assert!(!conflicts(e, Void));
        }
    }

    #[test]
    fn d6_opposite_means_conflicting_base_elements_and_void_is_opposite_to_nothing() {
        // RULES D-6
        assert!(opposite(Water, Fire));
        assert!(opposite(Earth, Water));
        assert!(!opposite(Water, Water));
        assert!(!opposite(Fire, Wind));
        for e in Element::ALL {
            assert!(!opposite(Void, e));
            assert!(!opposite(e, Void));
        }
    }

    #[test]
    fn neighbours_wrap_around_the_circle() {
        assert_eq!(Water.neighbours(), Some([Earth, Fire]));
        assert_eq!(Earth.neighbours(), Some([Wind, Water]));
        assert_eq!(Void.neighbours(), None);
    }
}
