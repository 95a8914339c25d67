package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/neobot/neobot/core/governance"
	"github.com/neobot/neobot/core/skill"
)

// registerPlaces adds the routes of the places' settings (docs/governance.md):
// GET /admin/v1/places (every place's newest version), GET
// /admin/v1/places/history?place=P, and POST /admin/v1/places, one new
// version, which applies before the answer (applied); checkModel refuses
// a model the bot does not serve.
func (a adminAPI) registerPlaces(mux *http.ServeMux, s governance.Store, skills *skill.Set, checkModel func(string) error, applied func(context.Context) error) {
	mux.HandleFunc("GET /admin/v1/places", a.serve(func(r *http.Request) (any, error) {
		return s.Places(r.Context())
	}))
	mux.HandleFunc("GET /admin/v1/places/history", a.serve(func(r *http.Request) (any, error) {
		return s.PlaceHistory(r.Context(), r.URL.Query().Get("place"))
	}))
	mux.HandleFunc("POST /admin/v1/places", func(w http.ResponseWriter, r *http.Request) {
		if !a.allowed(w, r) {
			return
		}
		var v governance.Version
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, a.maxBodyBytes)).Decode(&v); err != nil {
			http.Error(w, "body: want a version of a place's settings: {\"place\", \"version\", \"by\", \"settings\"}", http.StatusBadRequest)
			return
		}
		v, err := placeWriter{s: s, skills: skills, checkModel: checkModel, applied: applied}.SetPlace(r.Context(), v)
		if err != nil {
			http.Error(w, err.Error(), placeStatus(err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	})
}

// placeWriter is the one way a client's version of a place's settings is
// stored and applied: the admin API and the web chat's admin page both
// go through it.
type placeWriter struct {
	s          governance.Store
	skills     *skill.Set
	checkModel func(string) error          // refuses a model the bot does not serve
	applied    func(context.Context) error // applies the stored settings on this instance
}

// SetPlace checks v, a version a client made, stores it stamped now with
// the settings it replaces, and applies it before it returns. A refusal
// for what v says is a governance.Invalid; a stale version,
// governance.ErrConflict.
func (p placeWriter) SetPlace(ctx context.Context, v governance.Version) (governance.Version, error) {
	switch {
	case !skill.ValidPlace(v.Place):
		return v, governance.Invalid{Err: fmt.Errorf("%w: %q", governance.ErrPlace, v.Place)}
	case v.By == "":
		return v, governance.Invalid{Err: errors.New("by: say who makes the change")}
	case v.Settings.Skill != "" && !p.skills.Defines(v.Settings.Skill):
		return v, governance.Invalid{Err: fmt.Errorf("skill %q is not one the settings file defines", v.Settings.Skill)}
	}
	if err := v.Settings.CheckIn(v.Place); err != nil {
		return v, governance.Invalid{Err: err}
	}
	if err := p.checkModel(v.Settings.Model); err != nil {
		return v, governance.Invalid{Err: err}
	}
	cur, err := p.s.PlaceSettings(ctx, v.Place)
	if err != nil {
		return v, err
	}
	v.Before, v.At = cur.Settings, time.Now().UTC()
	if err := p.s.SetPlaceSettings(ctx, v); err != nil {
		return v, err
	}
	if err := p.applied(ctx); err != nil {
		return v, fmt.Errorf("stored, but not applied: %w", err)
	}
	return v, nil
}

// placeStatus is the HTTP status of SetPlace's refusal.
func placeStatus(err error) int {
	var bad governance.Invalid
	switch {
	case errors.As(err, &bad):
		return http.StatusBadRequest
	case errors.Is(err, governance.ErrConflict):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// remotePlaces is governance.Store through a running bot's admin API, for
// `neobot config` while the bot holds the bbolt file.
type remotePlaces struct{ r remote }

func (p remotePlaces) PlaceSettings(ctx context.Context, place string) (governance.Version, error) {
	h, err := p.PlaceHistory(ctx, place)
	if err != nil || len(h) == 0 {
		return governance.Version{Place: place}, err
	}
	return h[len(h)-1], nil
}

func (p remotePlaces) SetPlaceSettings(ctx context.Context, v governance.Version) error {
	var out governance.Version
	err := p.r.call(ctx, http.MethodPost, "/places", nil, v, &out)
	if err != nil && strings.Contains(err.Error(), fmt.Sprint(http.StatusConflict)+" ") {
		return fmt.Errorf("%w (%v)", governance.ErrConflict, err)
	}
	return err
}

func (p remotePlaces) PlaceHistory(ctx context.Context, place string) ([]governance.Version, error) {
	var out []governance.Version
	return out, p.r.call(ctx, http.MethodGet, "/places/history", url.Values{"place": {place}}, nil, &out)
}

func (p remotePlaces) Places(ctx context.Context) ([]governance.Version, error) {
	var out []governance.Version
	return out, p.r.call(ctx, http.MethodGet, "/places", nil, nil, &out)
}

var _ governance.Store = remotePlaces{}
