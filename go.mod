module gvs

go 1.26.0

require (
	github.com/ovn-kubernetes/libovsdb v0.8.1
	golang.org/x/sys v0.50.0
)

require golang.org/x/text v0.22.0 // indirect
