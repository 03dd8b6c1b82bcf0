module gvs

go 1.26.0

require github.com/ovn-kubernetes/libovsdb v0.8.1

require (
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.22.0 // indirect
)
