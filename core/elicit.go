package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The options of a question a tool's server asks (a gate with a Form).
// Every other option of such a gate is a value of its one choice field.
const (
	// ElicitOpen is the button of a form with fields to type in: it opens
	// the platform's form (a Slack or Discord modal, a web form) and
	// decides nothing itself.
	ElicitOpen = "Answer…"
	// ElicitDecline refuses to answer: the server hears "decline".
	ElicitDecline = "Decline"
	// ElicitCancel dismisses the question: the server hears "cancel".
	ElicitCancel = "Cancel"
	// ElicitDone answers a URL-mode question: the person opened the link
	// and did what it asks. The server hears "accept".
	ElicitDone = "Done"
)

// Elicitation actions, as the MCP specification names them.
const (
	ElicitAccepted  = "accept"
	ElicitDeclined  = "decline"
	ElicitCancelled = "cancel"
)

// Form is the form of a question a tool's server asks the person whose turn
// it is (an MCP elicitation): flat fields of simple types, as the
// requested schema restricts them.
type Form struct {
	Fields []FormField `json:"fields"`
	// URL, for a URL-mode question, is the page the person is asked to
	// open; such a form has no fields.
	URL string `json:"url,omitempty"`
}

// FormField is one field of a [Form].
type FormField struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is string, number, integer or boolean.
	Type string `json:"type"`
	// Format is a string's format: email, uri, date or date-time.
	Format string `json:"format,omitempty"`
	// Enum lists the values a string may take; EnumTitles, when set, has
	// their labels.
	Enum       []string `json:"enum,omitempty"`
	EnumTitles []string `json:"enum_titles,omitempty"`
	// Min and Max bound a number; MinLength and MaxLength a string.
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	MinLength *int     `json:"min_length,omitempty"`
	MaxLength *int     `json:"max_length,omitempty"`
	// Default is the schema's default value (SEP-1034): shown pre-filled,
	// and applied when the field is left out.
	Default  any  `json:"default,omitempty"`
	Required bool `json:"required,omitempty"`
}

// Label is how the field is named to a person: its title, else its name.
func (f FormField) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// maxFormFields bounds a form: five is what a Slack or Discord modal shows
// comfortably (Discord's modals take five inputs at most).
const maxFormFields = 5

// ErrFormUnsupported reports a requested schema neobot cannot show as a
// form: nested objects, arrays, or more fields than a modal takes.
var ErrFormUnsupported = errors.New("form not supported")

// ParseForm reads an MCP elicitation's requestedSchema (any JSON-shaped
// value) into a Form. Properties keep the order of the schema's JSON when
// it is given as raw JSON, else their name order.
func ParseForm(schema any) (*Form, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("elicit: schema: %w", err)
	}
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("elicit: schema: %w", err)
	}
	if s.Type != "" && s.Type != "object" {
		return nil, fmt.Errorf("elicit: schema of type %q: %w", s.Type, ErrFormUnsupported)
	}
	if len(s.Properties) > maxFormFields {
		return nil, fmt.Errorf("elicit: %d fields, more than %d: %w", len(s.Properties), maxFormFields, ErrFormUnsupported)
	}
	f := &Form{}
	for _, name := range propertyOrder(raw, s.Properties) {
		field, err := parseField(name, s.Properties[name])
		if err != nil {
			return nil, err
		}
		field.Required = slices.Contains(s.Required, name)
		f.Fields = append(f.Fields, field)
	}
	return f, nil
}

// propertyOrder returns the names of props in the order the raw schema
// lists them.
func propertyOrder(raw []byte, props map[string]json.RawMessage) []string {
	var names []string
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &s) == nil {
		dec := json.NewDecoder(strings.NewReader(string(s.Properties)))
		if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					break
				}
				if name, ok := tok.(string); ok {
					names = append(names, name)
				}
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
			}
		}
	}
	if len(names) != len(props) {
		names = slices.Sorted(func(yield func(string) bool) {
			for k := range props {
				if !yield(k) {
					return
				}
			}
		})
	}
	return names
}

func parseField(name string, raw json.RawMessage) (FormField, error) {
	var p struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Format      string   `json:"format"`
		Enum        []any    `json:"enum"`
		EnumNames   []string `json:"enumNames"`
		OneOf       []struct {
			Const any    `json:"const"`
			Title string `json:"title"`
		} `json:"oneOf"`
		Minimum   *float64 `json:"minimum"`
		Maximum   *float64 `json:"maximum"`
		MinLength *int     `json:"minLength"`
		MaxLength *int     `json:"maxLength"`
		Default   any      `json:"default"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return FormField{}, fmt.Errorf("elicit: field %q: %w", name, err)
	}
	f := FormField{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Format: p.Format,
		Min: p.Minimum, Max: p.Maximum, MinLength: p.MinLength, MaxLength: p.MaxLength, Default: p.Default}
	switch p.Type {
	case "string", "number", "integer", "boolean":
	default:
		return FormField{}, fmt.Errorf("elicit: field %q of type %q: %w", name, p.Type, ErrFormUnsupported)
	}
	for _, v := range p.Enum {
		f.Enum = append(f.Enum, fmt.Sprint(v))
	}
	if len(p.EnumNames) == len(f.Enum) {
		f.EnumTitles = p.EnumNames
	}
	if len(f.Enum) == 0 {
		for _, o := range p.OneOf {
			f.Enum = append(f.Enum, fmt.Sprint(o.Const))
			f.EnumTitles = append(f.EnumTitles, o.Title)
		}
	}
	if f.Default != nil {
		if _, err := f.value(fmt.Sprint(f.Default)); err != nil {
			f.Default = nil // a default the schema itself breaks is no default
		}
	}
	return f, nil
}

// Choice returns the options of a form that is one choice, answered with
// a button each: its one field is an enum or a boolean. ok is false for a
// form that needs typing.
func (f *Form) Choice() (options []string, ok bool) {
	if f == nil || len(f.Fields) != 1 {
		return nil, false
	}
	fd := f.Fields[0]
	switch {
	case fd.Type == "boolean":
		return []string{"Yes", "No"}, true
	case len(fd.Enum) > 0 && len(fd.Enum) <= 20:
		return fd.choiceLabels(), true
	}
	return nil, false
}

// choiceLabels labels each enum value: its title, else the value. A
// click is recorded by its button's label, so each label is unique and
// none is one of neobot's own buttons: a title already taken (two
// choices titled "Yes", or one titled "Decline") gets its value added,
// then a number if that is taken too.
func (f FormField) choiceLabels() []string {
	out := make([]string, len(f.Enum))
	taken := map[string]bool{ElicitOpen: true, ElicitDecline: true, ElicitCancel: true}
	for i, v := range f.Enum {
		l := v
		if i < len(f.EnumTitles) && f.EnumTitles[i] != "" {
			l = f.EnumTitles[i]
		}
		if taken[l] && l != v {
			l += " (" + v + ")"
		}
		for n, base := 2, l; taken[l]; n++ {
			l = fmt.Sprintf("%s (%d)", base, n)
		}
		taken[l] = true
		out[i] = l
	}
	return out
}

// Options returns a gate's options for the form: a button per choice, one
// that opens the form, or Done for a URL-mode question, then Decline and
// Cancel. The choices and the
// button that opens the form are marked Approves (they answer the
// question); Decline and Cancel are not. See [Option].
func (f *Form) Options() []Option {
	labels, ok := f.Choice()
	switch {
	case f != nil && f.URL != "":
		labels = []string{ElicitDone}
	case !ok:
		labels = []string{ElicitOpen}
	}
	opts := make([]Option, 0, len(labels)+2)
	for _, l := range labels {
		opts = append(opts, Option{Label: l, Approves: true})
	}
	return append(opts, Option{Label: ElicitDecline}, Option{Label: ElicitCancel})
}

// chose returns the values answered by the choice option.
func (f *Form) chose(option string) (map[string]any, bool) {
	if f.URL != "" {
		return map[string]any{}, option == ElicitDone
	}
	opts, ok := f.Choice()
	if !ok {
		return nil, false
	}
	i := slices.Index(opts, option)
	if i < 0 {
		return nil, false
	}
	fd := f.Fields[0]
	if fd.Type == "boolean" {
		return map[string]any{fd.Name: i == 0}, true
	}
	v, err := fd.value(fd.Enum[i])
	if err != nil {
		return nil, false
	}
	return map[string]any{fd.Name: v}, true
}

// Prefill returns the text a field's input starts with: its default.
func (f FormField) Prefill() string {
	if f.Default == nil {
		return ""
	}
	return fmt.Sprint(f.Default)
}

// Fill checks what a person typed in the form, by field name, and returns
// the values to send: each converted to its field's type, defaults
// applied to fields left empty (SEP-1034). problems, by field name, say
// what is wrong in a sentence for the person; values is nil then.
func (f *Form) Fill(input map[string]string) (values map[string]any, problems map[string]string) {
	values, problems = map[string]any{}, map[string]string{}
	for _, fd := range f.Fields {
		text := strings.TrimSpace(input[fd.Name])
		if text == "" {
			switch {
			case fd.Default != nil:
				values[fd.Name], _ = fd.value(fmt.Sprint(fd.Default))
			case fd.Required:
				problems[fd.Name] = fd.Label() + " is required."
			}
			continue
		}
		v, err := fd.value(text)
		if err != nil {
			problems[fd.Name] = err.Error()
			continue
		}
		values[fd.Name] = v
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return values, nil
}

// WithDefaults returns content with the defaults of the fields it leaves
// out (SEP-1034); content itself is not changed.
func (f *Form) WithDefaults(content map[string]any) map[string]any {
	out := make(map[string]any, len(content)+len(f.Fields))
	for k, v := range content {
		out[k] = v
	}
	for _, fd := range f.Fields {
		if _, ok := out[fd.Name]; !ok && fd.Default != nil {
			out[fd.Name], _ = fd.value(fmt.Sprint(fd.Default))
		}
	}
	return out
}

// value converts text to the field's type and checks it against the
// field's constraints; the error is a sentence for the person.
func (f FormField) value(text string) (any, error) {
	label := f.Label()
	switch f.Type {
	case "boolean":
		switch strings.ToLower(text) {
		case "true", "yes", "y", "1":
			return true, nil
		case "false", "no", "n", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%s must be yes or no.", label)
	case "number", "integer":
		n, err := strconv.ParseFloat(strings.ReplaceAll(text, ",", ""), 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, fmt.Errorf("%s must be a number.", label)
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return nil, fmt.Errorf("%s must be a whole number.", label)
		}
		if f.Min != nil && n < *f.Min {
			return nil, fmt.Errorf("%s must be at least %s.", label, strconv.FormatFloat(*f.Min, 'f', -1, 64))
		}
		if f.Max != nil && n > *f.Max {
			return nil, fmt.Errorf("%s must be at most %s.", label, strconv.FormatFloat(*f.Max, 'f', -1, 64))
		}
		if f.Type == "integer" {
			return int64(n), nil
		}
		return n, nil
	}
	if len(f.Enum) > 0 {
		if i := slices.Index(f.Enum, text); i >= 0 {
			return f.Enum[i], nil
		}
		if i := slices.Index(f.EnumTitles, text); i >= 0 {
			return f.Enum[i], nil
		}
		return nil, fmt.Errorf("%s must be one of: %s.", label, strings.Join(f.choiceLabels(), ", "))
	}
	n := utf8.RuneCountInString(text)
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fmt.Errorf("%s must be at least %d characters.", label, *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fmt.Errorf("%s must be at most %d characters.", label, *f.MaxLength)
	}
	if err := checkFormat(f.Format, text); err != nil {
		return nil, fmt.Errorf("%s must be %s.", label, err.Error())
	}
	return text, nil
}

// checkFormat checks the simple string formats; an unknown format is not
// checked.
func checkFormat(format, text string) error {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(text); err != nil || a.Address != text {
			return errors.New("an email address")
		}
	case "uri":
		if u, err := url.Parse(text); err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "") {
			return errors.New("a full URL (https://…)")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, text); err != nil {
			return errors.New("a date written YYYY-MM-DD")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, text); err != nil {
			return errors.New("a date and time written like 2026-01-31T09:30:00Z")
		}
	}
	return nil
}
