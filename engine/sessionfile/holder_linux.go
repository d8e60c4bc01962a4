package sessionfile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// holderPid finds the process that holds the flock of the file key names,
// in /proc/locks ("1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode>
// 0 EOF", the device numbers in hex), so a refusal can name it under any
// of the file's names; 0 when it is not listed.
func holderPid(key fileKey) int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	// The kernel's encoding of a device number in user space.
	major := (key.dev>>8)&0xfff | (key.dev>>32)&^uint64(0xfff)
	minor := key.dev&0xff | (key.dev>>12)&^uint64(0xff)
	want := []byte(fmt.Sprintf("%02x:%02x:%d", major, minor, key.ino))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := bytes.Fields(sc.Bytes())
		// A waiter's line has "->" after the number; the holder's does not.
		if len(fs) < 6 || string(fs[1]) != "FLOCK" || string(fs[3]) != "WRITE" || !bytes.Equal(fs[5], want) {
			continue
		}
		if pid, err := strconv.Atoi(string(fs[4])); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
