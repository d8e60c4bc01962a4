package sandbox

import (
	"fmt"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// apply lays out the calling process's mount namespace, a new one owned
// by its new user namespace (so nothing here reaches the rest of the
// system): every mount read-only but the writable roots, the pinned
// directories given mounts of their own (a mount point cannot be renamed
// or removed), and the read-only paths bound read-only over themselves.
// The roots are cloned before the tree is made read-only and moved back
// over themselves after, so they keep their own flags. A read-only mount
// refuses every change, metadata too (chmod, chown, utime, xattrs), and
// device files stay writable on it. Then the process enters its working
// directory again, which the new mounts now cover. It needs
// CAP_SYS_ADMIN in the user namespace (NamespaceAttr keeps it across the
// exec; Apply drops it after).
func (m Mounts) apply() error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	everything := slices.Contains(m.Writable, "/")
	clones := make([]int, 0, len(m.Writable))
	defer func() {
		for _, fd := range clones {
			unix.Close(fd)
		}
	}()
	for _, w := range m.Writable {
		if w == "/" {
			continue
		}
		fd, err := clone(w)
		if err != nil {
			return err
		}
		clones = append(clones, fd)
	}
	if !everything {
		if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("making the file tree read-only: %w", err)
		}
	}
	i := 0
	for _, w := range m.Writable {
		if w == "/" {
			continue
		}
		if err := unix.MoveMount(clones[i], "", unix.AT_FDCWD, w, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mounting %s writable: %w", w, err)
		}
		i++
	}
	for _, p := range m.Pinned {
		if err := bindOver(p, false); err != nil {
			return err
		}
	}
	for _, p := range m.ReadOnly {
		if err := bindOver(p, true); err != nil {
			return err
		}
	}
	return unix.Chdir(wd)
}

// clone opens a detached copy of the mounts at path (and below it).
func clone(path string) (int, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return -1, fmt.Errorf("cloning the mount of %s: %w", path, err)
	}
	return fd, nil
}

// bindOver mounts path over itself, read-only when asked.
func bindOver(path string, readOnly bool) error {
	fd, err := clone(path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if readOnly {
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("making %s read-only: %w", path, err)
		}
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("mounting %s over itself: %w", path, err)
	}
	return nil
}
