package dpadapter

import (
	"context"
	"log/slog"
	"time"

	"github.com/vishvananda/netlink"
)

// WatchLinks calls changed whenever the kernel reports a link appearing,
// disappearing or changing (RTM_NEWLINK, RTM_DELLINK), until ctx ends. It
// resubscribes when the netlink socket fails. changed must not block.
func WatchLinks(ctx context.Context, logger *slog.Logger, changed func()) {
	for ctx.Err() == nil {
		updates := make(chan netlink.LinkUpdate, 64)
		done := make(chan struct{})
		failed := make(chan error, 1)
		err := netlink.LinkSubscribeWithOptions(updates, done, netlink.LinkSubscribeOptions{
			ErrorCallback: func(err error) {
				select {
				case failed <- err:
				default:
				}
			},
		})
		if err != nil {
			logger.Warn("netlink link subscription failed: " + err.Error())
		} else {
			watch(ctx, updates, failed, logger, changed)
		}
		close(done)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func watch(ctx context.Context, updates <-chan netlink.LinkUpdate, failed <-chan error, logger *slog.Logger, changed func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-failed:
			logger.Warn("netlink link events: " + err.Error() + "; resubscribing")
			return
		case _, ok := <-updates:
			if !ok {
				return
			}
			changed()
		}
	}
}
