// Package all imports every collector so that it registers itself.
package all

import (
	_ "github.com/perfwh/perfwh/collectors/host" // host CPU, memory, disk, network
)
