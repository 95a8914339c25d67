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
		v, status, err := storePlace(r.Context(), s, skills, checkModel, v)
		if err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		if err := applied(r.Context()); err != nil {
			http.Error(w, "stored, but not applied: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	})
}

// storePlace checks a version a client made and stores it, stamped now,
// with the settings it replaces; it returns the HTTP status of a refusal.
func storePlace(ctx context.Context, s governance.Store, skills *skill.Set, checkModel func(string) error, v governance.Version) (governance.Version, int, error) {
	switch {
	case !skill.ValidPlace(v.Place):
		return v, http.StatusBadRequest, fmt.Errorf("%w: %q", governance.ErrPlace, v.Place)
	case v.By == "":
		return v, http.StatusBadRequest, errors.New("by: say who makes the change")
	case v.Settings.Skill != "" && !skills.Defines(v.Settings.Skill):
		return v, http.StatusBadRequest, fmt.Errorf("skill %q is not one the settings file defines", v.Settings.Skill)
	}
	if err := v.Settings.CheckIn(v.Place); err != nil {
		return v, http.StatusBadRequest, err
	}
	if err := checkModel(v.Settings.Model); err != nil {
		return v, http.StatusBadRequest, err
	}
	cur, err := s.PlaceSettings(ctx, v.Place)
	if err != nil {
		return v, http.StatusInternalServerError, err
	}
	v.Before, v.At = cur.Settings, time.Now().UTC()
	err = s.SetPlaceSettings(ctx, v)
	if errors.Is(err, governance.ErrConflict) {
		return v, http.StatusConflict, err
	}
	if err != nil {
		return v, http.StatusInternalServerError, err
	}
	return v, http.StatusOK, nil
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
