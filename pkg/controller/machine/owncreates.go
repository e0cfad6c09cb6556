package machine

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// createWindow bounds how long a reconcile trusts the controller's own
// creation of a Machine's instance while the provider's cache does not
// show the instance yet. The provider's cache and the infra watch share
// their informers, so the instance's watch event brings the Machine back as
// soon as the cache has it; an instance not seen within the window is taken
// as lost, and Create runs again (it finds what exists and creates nothing
// twice).
const createWindow = 10 * time.Second

// ownCreates remembers, per Machine, the UID of the Machine whose instance
// the controller created, and when. The reconcile after a creation often
// runs before the infra cache has the new VM: the Machine's own patches are
// events of the user cluster, which arrive first. Without the record that
// reconcile would call Create again, which costs the infra cluster a
// rejected POST and a direct read per object, and the Machine a second
// Created event. The zero value is ready to use and safe for concurrent
// use; forget drops a record once the cache shows the instance.
type ownCreates struct {
	ownRecords[types.UID]
}

// pending returns how long to wait for the cache to show the instance the
// controller created for the Machine key with the given UID: the rest of
// createWindow, or 0 when there is no such creation. A record past the
// window, or of an earlier Machine of the same name, is dropped.
func (c *ownCreates) pending(key types.NamespacedName, uid types.UID, now time.Time) time.Duration {
	return c.wait(key, createWindow, now, func(created types.UID) bool { return created == uid })
}
