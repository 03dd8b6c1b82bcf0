package metrics

import "github.com/prometheus/client_golang/prometheus"

// Label names shared by the collectors.
var (
	interfaceLabels = []string{"bridge", "port", "interface", "type"}
	pmdLabels       = []string{"pmd", "cpu"}
	bridgeLabels    = []string{"bridge"}
)

// descSet collects the descriptors of one collector for Describe.
type descSet []*prometheus.Desc

// add returns a new descriptor named gvs_NAME and remembers it.
func (s *descSet) add(name, help string, labels []string, extra ...string) *prometheus.Desc {
	ls := append(append([]string(nil), labels...), extra...)
	d := prometheus.NewDesc("gvs_"+name, help, ls, nil)
	*s = append(*s, d)
	return d
}

func (s descSet) describe(ch chan<- *prometheus.Desc) {
	for _, d := range s {
		ch <- d
	}
}

func counter(d *prometheus.Desc, v uint64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func boolGauge(d *prometheus.Desc, b bool, labels ...string) prometheus.Metric {
	v := 0.0
	if b {
		v = 1
	}
	return gauge(d, v, labels...)
}
