// Package governance keeps what each place's people decided Neo may do
// there as data: a place's skill, instructions, model, daily token budget,
// spend authority and approvers, stored and versioned, every change
// recorded with who made it, when, and the settings before and after.
//
// The settings file (NEO_CONFIG) stays the starting point: [Start]
// stores a place the file binds as its version 1 when the place has none,
// and an empty field means "as the file says". The store satisfies
// [Store]; [Change] is the one way a change is made.
package governance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/neobot/neobot/core/skill"
)

// Settings is one place's governance. A zero field leaves the place as
// the settings file and its skills say.
type Settings struct {
	// Skill names the skill the place is bound to.
	Skill string `json:"skill,omitempty"`
	// Instructions are added to the skill's in Neo's system block there.
	Instructions string `json:"instructions,omitempty"`
	// Model is the main model's name there.
	Model string `json:"model,omitempty"`
	// DailyTokens caps the model tokens spent there in a UTC day.
	DailyTokens int64 `json:"daily_tokens,omitempty"`
	// Spend, when set, says whether Neo may delegate spends there (the
	// skill's "spend" otherwise).
	Spend *bool `json:"spend,omitempty"`
	// Approvers are the people (platform user IDs) who may approve there,
	// besides the platform's configured ones.
	Approvers []string `json:"approvers,omitempty"`
}

// MaxInstructions bounds a place's instructions, as a skill's are: they
// go with every model call.
const MaxInstructions = 8000

// Check says what is wrong with s, in words for whoever set it; nil when
// nothing is.
func (s Settings) Check() error {
	var errs []error
	if n := len(s.Instructions); n > MaxInstructions {
		errs = append(errs, fmt.Errorf("instructions are %d bytes; keep them under %d: they go with every model call", n, MaxInstructions))
	}
	if !utf8.ValidString(s.Instructions) {
		errs = append(errs, errors.New("instructions are not valid UTF-8"))
	}
	if s.DailyTokens < 0 {
		errs = append(errs, errors.New("daily_tokens must be positive, or 0 for the settings file's budget"))
	}
	for _, a := range s.Approvers {
		if a == "" || strings.ContainsAny(a, " \t\n,") {
			errs = append(errs, fmt.Errorf("approver %q is not a user ID", a))
		}
	}
	if strings.ContainsAny(s.Skill+s.Model, " \t\n") {
		errs = append(errs, errors.New("skill and model are names, without spaces"))
	}
	return errors.Join(errs...)
}

// CheckIn is Check for settings of place: besides, a daily token budget
// cannot be set on direct messages ("slack:dm"), whose usage is not told
// apart from the rest of the platform's, nor on an Enterprise Grid
// organization ("slack:E0123"), whose usage is counted by workspace.
func (s Settings) CheckIn(place string) error {
	err := s.Check()
	if _, rest, _ := strings.Cut(place, ":"); rest == "dm" && s.DailyTokens > 0 {
		err = errors.Join(err, fmt.Errorf("daily_tokens cannot be set on %s: direct messages' usage is not counted apart; set it on the platform (%s) instead", place, strings.TrimSuffix(place, ":dm")))
	}
	if org, ok := skill.Org(place); ok && s.DailyTokens > 0 {
		err = errors.Join(err, fmt.Errorf("daily_tokens cannot be set on an Enterprise Grid organization (%s) yet: usage is counted by workspace; set it on each workspace (slack:T…) or on slack instead", org))
	}
	return err
}

// Equal reports whether s and o say the same.
func (s Settings) Equal(o Settings) bool {
	spend := func(b *bool) string {
		if b == nil {
			return ""
		}
		return fmt.Sprint(*b)
	}
	return s.Skill == o.Skill && s.Instructions == o.Instructions && s.Model == o.Model &&
		s.DailyTokens == o.DailyTokens && spend(s.Spend) == spend(o.Spend) && slices.Equal(s.Approvers, o.Approvers)
}

// Version is one version of a place's settings, and the change that made
// it.
type Version struct {
	Place string `json:"place"`
	// Number counts the place's versions from 1; 0 is a place never set.
	Number int64 `json:"version"`
	// By is who made the change: "slack:T0123/U0456", "web:alice",
	// "cli:ops".
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	Before   Settings  `json:"before"`
	Settings Settings  `json:"settings"`
}

// ErrConflict means the place's settings changed since they were read:
// the change was not made.
var ErrConflict = errors.New("governance: the place's settings changed meanwhile; read them again and redo the change")

// Store keeps every place's versions. A store writes version n only if
// the place's newest is n-1, else fails with ErrConflict, so two
// instances changing a place at once cannot lose either change unseen.
type Store interface {
	// PlaceSettings returns the place's newest version; Number 0 when it
	// was never set.
	PlaceSettings(ctx context.Context, place string) (Version, error)
	// SetPlaceSettings stores v as the place's newest version.
	SetPlaceSettings(ctx context.Context, v Version) error
	// PlaceHistory returns the place's versions, oldest first.
	PlaceHistory(ctx context.Context, place string) ([]Version, error)
	// Places returns the newest version of every place set, by place.
	Places(ctx context.Context) ([]Version, error)
}

// ErrPlace means a place is not written as the skills' places are.
var ErrPlace = errors.New("governance: not a place; write slack, slack:dm, slack:<team>, slack:<team>/<channel> (the same for discord), slack:<Enterprise Grid organization>, web or web:web/<user>")

// ErrUnchanged means a change would leave the settings as they are: no
// version is made.
var ErrUnchanged = errors.New("governance: the settings already say that")

// Change applies edit to place's newest settings and stores the result
// as the next version, made by by at now. It returns the new version.
func Change(ctx context.Context, s Store, place, by string, now time.Time, edit func(*Settings)) (Version, error) {
	if !skill.ValidPlace(place) || skill.OrgChannel(place) {
		return Version{}, fmt.Errorf("%w: %q", ErrPlace, place)
	}
	if by == "" {
		return Version{}, errors.New("governance: a change needs who made it")
	}
	cur, err := s.PlaceSettings(ctx, place)
	if err != nil {
		return Version{}, err
	}
	next := cur.Settings
	next.Approvers = slices.Clone(next.Approvers)
	edit(&next)
	if err := next.CheckIn(place); err != nil {
		return Version{}, fmt.Errorf("governance: %s: %w", place, err)
	}
	if next.Equal(cur.Settings) {
		return cur, ErrUnchanged
	}
	v := Version{Place: place, Number: cur.Number + 1, By: by, At: now.UTC(), Before: cur.Settings, Settings: next}
	if err := s.SetPlaceSettings(ctx, v); err != nil {
		return Version{}, err
	}
	return v, nil
}

// FromFile is who the versions the settings file starts are made by.
const FromFile = "config file"

// Start stores settings as place's version 1, made by FromFile at now,
// unless place has a version already: then nothing is written and
// stored is false, so the settings file starts a place's settings and
// never overwrites them. Several instances starting at once store it
// once: a store writes version 1 only where there is none (ErrConflict
// for the others).
func Start(ctx context.Context, s Store, place string, settings Settings, now time.Time) (stored bool, err error) {
	if !skill.ValidPlace(place) || skill.OrgChannel(place) {
		return false, fmt.Errorf("%w: %q", ErrPlace, place)
	}
	if err := settings.CheckIn(place); err != nil {
		return false, fmt.Errorf("governance: %s: %w", place, err)
	}
	cur, err := s.PlaceSettings(ctx, place)
	if err != nil {
		return false, err
	}
	if cur.Number > 0 {
		return false, nil
	}
	v := Version{Place: place, Number: 1, By: FromFile, At: now.UTC(), Settings: settings}
	switch err := s.SetPlaceSettings(ctx, v); {
	case errors.Is(err, ErrConflict):
		return false, nil // another instance stored it first
	case err != nil:
		return false, err
	}
	return true, nil
}

// Invalid is a change refused for what it says (a place written wrong,
// settings that do not check, a skill the settings file does not
// define): Err says why, for whoever made it.
type Invalid struct{ Err error }

func (e Invalid) Error() string { return e.Err.Error() }

// Unwrap returns why the change was refused.
func (e Invalid) Unwrap() error { return e.Err }
