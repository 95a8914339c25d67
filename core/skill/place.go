package skill

// ValidPlace reports whether place is written as a skill's places are:
// "slack", "slack:dm", "slack:T0123", "slack:T0123/C0456" (the same for
// discord), "web", "web:web/alice".
func ValidPlace(place string) bool { return placeRe.MatchString(place) }
