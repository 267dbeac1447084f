package dev.streamshell.fs;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.fs.FSLinkResolver;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's raw local file system, with the calls that start a process done through java.nio instead.
 *
 * <p>Why it exists: without Hadoop's native library (which no pip or Maven package ships), Hadoop's local file
 * system runs {@code chmod} for every file and directory it creates and {@code readlink} for every link status it
 * reads, which {@code FileContext} does for both sides of every rename. A streaming query writes several small
 * files per micro-batch (its offset and commit logs, each state store's changelog file and their checksums), each
 * created under a temporary name and renamed: measured on a job of the user count, 54 processes started per second,
 * and each state store's commit took 60-180 ms of a ~700 ms micro-batch. The files, their bytes and their
 * permissions are the same; only the way they are set and read changes. A sticky bit, which java.nio cannot set, is
 * still set by Hadoop's own {@code chmod}.
 */
public class NoForkRawLocalFileSystem extends RawLocalFileSystem {

  private static final PosixFilePermission[] BITS = {
    PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
    PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
    PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ,
  };
  private static final int STICKY = 01000;

  static Set<PosixFilePermission> toPosix(int mode) {
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    for (int bit = 0; bit < BITS.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        set.add(BITS[bit]);
      }
    }
    return set;
  }

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    if (permission.getStickyBit()) {
      super.setPermission(p, permission);  // java.nio has no sticky bit
      return;
    }
    try {
      Files.setPosixFilePermissions(pathToFile(p).toPath(), toPosix(permission.toShort()));
    } catch (FileSystemException e) {
      throw notFound(p, e);
    }
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return status(f, null);
  }

  /**
   * As Hadoop's: for a link, the status of what it points to (not a directory, whatever it points to) with the
   * link's target, qualified; for anything else, its status.
   */
  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    java.nio.file.Path nio = pathToFile(f).toPath();
    if (!Files.isSymbolicLink(nio)) {
      return status(f, null);
    }
    Path target = linkTarget(f, nio);
    Path qualified = FSLinkResolver.qualifySymlinkTarget(getUri(), f, target);
    try {
      return status(f, qualified);
    } catch (FileNotFoundException dangling) {  // a link to nothing: Hadoop's empty status, with the target
      return new FileStatus(0, false, 0, 0, 0, 0, FsPermission.getDefault(), "", "", qualified,
          f.makeQualified(getUri(), getWorkingDirectory()));
    }
  }

  @Override
  public Path getLinkTarget(Path f) throws IOException {
    return linkTarget(f, pathToFile(f).toPath());
  }

  private static Path linkTarget(Path f, java.nio.file.Path nio) throws IOException {
    try {
      return new Path(Files.readSymbolicLink(nio).toString());
    } catch (FileSystemException e) {
      throw notFound(f, e);
    }
  }

  /** The status of f (following links), with no process; `link` is set on a link's status. */
  private FileStatus status(Path f, Path link) throws IOException {
    File file = pathToFile(f);
    PosixFileAttributes attributes;
    int mode;
    try {
      attributes = Files.readAttributes(file.toPath(), PosixFileAttributes.class);
      mode = (Integer) Files.getAttribute(file.toPath(), "unix:mode") & 01777;
    } catch (FileSystemException e) {  // missing, under a file, unreadable folder, a loop: as File.exists() false
      throw notFound(f, e);
    }
    return new FileStatus(
        attributes.size(),
        link == null && attributes.isDirectory(),  // a link is not a directory, as in Hadoop
        1,
        getDefaultBlockSize(f),
        attributes.lastModifiedTime().toMillis(),
        attributes.lastAccessTime().toMillis(),
        new FsPermission((short) mode),
        attributes.owner().getName(),
        attributes.group().getName(),
        link,
        f.makeQualified(getUri(), getWorkingDirectory()));
  }

  private static FileNotFoundException notFound(Path f, FileSystemException cause) {
    FileNotFoundException e = new FileNotFoundException("File " + f + " does not exist");
    e.initCause(cause);
    return e;
  }
}
