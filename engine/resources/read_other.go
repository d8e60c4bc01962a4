//go:build !unix

package resources

import "os"

const openFlags = os.O_RDONLY
