// Package report holds the benchmark's results model and turns it into
// the terminal table, JSON, CSV, a Markdown page for the README and one
// SVG bar chart per figure, with ratios to the references: the direct veth
// pair, Open vSwitch's default configuration and the best Open vSwitch
// variant for each figure. A Curve (the scale test's latency against the
// number of ports) becomes an SVG line chart. Targets compare a setup's
// figure with another setup's, another figure's or a bound.
//
// Everything is plain functions over values; nothing here touches the
// network. Not safe for concurrent mutation of one Results.
package report
