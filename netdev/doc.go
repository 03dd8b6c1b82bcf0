// Package netdev will hold the network devices the datapath sends and
// receives packets through (batched receive and send per queue, link
// state, MTU, statistics), with one sub-package per backend.
//
// It is a placeholder: nothing lives here yet. It arrives with the issue
// that adds the datapath.
package netdev
