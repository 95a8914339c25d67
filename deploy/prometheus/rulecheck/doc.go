// Package rulecheck checks neobot's alerting rules
// (deploy/prometheus/alerts.yml) and Grafana dashboard
// (deploy/grafana/neobot.json) with Prometheus's own parsers: the rules as
// `promtool check rules` parses them (model/rulefmt), every query as
// Prometheus parses PromQL. It is a module of its own so that Prometheus's
// dependencies never enter neobot's go.mod; make test runs it. That the
// metrics they name are ones neobot exports is checked in cmd/neobot
// (TestAlertRules, TestGrafanaDashboard).
package rulecheck
