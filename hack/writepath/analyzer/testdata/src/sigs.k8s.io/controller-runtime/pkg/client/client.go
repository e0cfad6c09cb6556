// Package client declares the shape of controller-runtime's client
// interfaces that the analyzer looks for.
package client

import "context"

type Object interface{ GetName() string }

type Writer interface {
	Create(ctx context.Context, obj Object) error
	Update(ctx context.Context, obj Object) error
	Patch(ctx context.Context, obj Object) error
	Apply(ctx context.Context, obj Object) error
	Delete(ctx context.Context, obj Object) error
	DeleteAllOf(ctx context.Context, obj Object) error
}

type SubResourceWriter interface {
	Create(ctx context.Context, obj, sub Object) error
	Update(ctx context.Context, obj Object) error
	Patch(ctx context.Context, obj Object) error
}

type Reader interface {
	Get(ctx context.Context, obj Object) error
}

type StatusWriter = SubResourceWriter

type Client interface {
	Reader
	Writer
	Status() SubResourceWriter
}
