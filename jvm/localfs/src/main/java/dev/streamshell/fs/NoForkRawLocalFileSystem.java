package dev.streamshell.fs;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's raw local file system, with the three calls that fork a process done through java.nio instead.
 *
 * <p>Why it exists: without Hadoop's native library (which no pip or Maven package ships), Hadoop's local file
 * system runs {@code chmod} for every file and directory it creates and {@code readlink} (or {@code stat}) for every
 * status it reads, renames included. A streaming query writes several small files per micro-batch (its offset and
 * commit logs, each state store's changelog file and their checksums): measured on a job of the user count, 54
 * processes started per second, and each state store's commit took 60-180 ms of a ~700 ms micro-batch. The files,
 * their bytes and their permissions are the same; only the way they are set and read changes.
 */
public class NoForkRawLocalFileSystem extends RawLocalFileSystem {

  private static final PosixFilePermission[] BITS = {
    PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
    PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
    PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ,
  };

  static Set<PosixFilePermission> toPosix(FsPermission permission) {
    int mode = permission.toShort();
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    for (int bit = 0; bit < BITS.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        set.add(BITS[bit]);
      }
    }
    return set;
  }

  static FsPermission fromPosix(Set<PosixFilePermission> set) {
    int mode = 0;
    for (int bit = 0; bit < BITS.length; bit++) {
      if (set.contains(BITS[bit])) {
        mode |= 1 << bit;
      }
    }
    return new FsPermission((short) mode);
  }

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    try {
      Files.setPosixFilePermissions(pathToFile(p).toPath(), toPosix(permission));
    } catch (NoSuchFileException e) {
      throw new FileNotFoundException("File " + p + " does not exist");
    }
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return status(f, true);
  }

  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    return status(f, false);
  }

  /** The status of f (of the link itself when f is a symbolic link and follow is false), with no process. */
  private FileStatus status(Path f, boolean follow) throws IOException {
    File file = pathToFile(f);
    java.nio.file.Path nio = file.toPath();
    PosixFileAttributes attributes;
    try {
      attributes = follow
          ? Files.readAttributes(nio, PosixFileAttributes.class)
          : Files.readAttributes(nio, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      throw new FileNotFoundException("File " + f + " does not exist");
    }
    Path target = null;
    if (attributes.isSymbolicLink()) {
      target = new Path(Files.readSymbolicLink(nio).toString());
    }
    return new FileStatus(
        attributes.isDirectory() ? 0 : attributes.size(),
        attributes.isDirectory(),
        1,
        getDefaultBlockSize(f),
        attributes.lastModifiedTime().toMillis(),
        attributes.lastAccessTime().toMillis(),
        fromPosix(attributes.permissions()),
        attributes.owner().getName(),
        attributes.group().getName(),
        target,
        f.makeQualified(getUri(), getWorkingDirectory()));
  }
}
