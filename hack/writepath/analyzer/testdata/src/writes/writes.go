package writes

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// store has write methods of its own: they are not the client's.
type store struct{}

func (store) Create(context.Context, client.Object) error { return nil }

func direct(ctx context.Context, c client.Client, w client.Writer, obj client.Object) {
	_ = c.Create(ctx, obj)          // want `client.Writer.Create bypasses package apply`
	_ = w.Delete(ctx, obj)          // want `client.Writer.Delete bypasses package apply`
	_ = c.Status().Update(ctx, obj) // want `client.SubResourceWriter.Update bypasses package apply`
	_ = c.Get(ctx, obj)
	_ = store{}.Create(ctx, obj)
}

func exempt(ctx context.Context, c client.Client, obj client.Object) {
	//writepath:direct a reason on the line above
	_ = c.Patch(ctx, obj)
	_ = c.Apply(ctx, obj) //writepath:direct a reason at the end of the line
	//writepath:direct // want `//writepath:direct needs a reason`
	_ = c.Update(ctx, obj)
	//writepath:direct no write follows // want `//writepath:direct stands above no write`
	_ = c.Get(ctx, obj)
}
