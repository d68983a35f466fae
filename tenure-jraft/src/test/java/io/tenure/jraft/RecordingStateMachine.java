package io.tenure.jraft;

import com.alipay.sofa.jraft.Closure;
import com.alipay.sofa.jraft.Iterator;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.core.StateMachineAdapter;
import com.alipay.sofa.jraft.error.RaftError;
import com.alipay.sofa.jraft.storage.snapshot.SnapshotReader;
import com.alipay.sofa.jraft.storage.snapshot.SnapshotWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Records every applied entry as a UTF-8 string, in order. A snapshot is the list so far, one entry
 * a line, in the file {@value #SNAPSHOT_FILE} of the snapshot's directory.
 */
final class RecordingStateMachine extends StateMachineAdapter {
  static final String SNAPSHOT_FILE = "entries";

  private final List<String> entries = new ArrayList<>();
  private List<String> loadedFromSnapshot = List.of();
  private int snapshotLoads;

  @Override
  public void onApply(Iterator iter) {
    while (iter.hasNext()) {
      // On the leader, getData() is the buffer that replicators later send to lagging followers:
      // read a duplicate, never the original.
      ByteBuffer data = iter.getData().duplicate();
      String entry = StandardCharsets.UTF_8.decode(data).toString();
      synchronized (this) {
        entries.add(entry);
      }
      if (iter.done() != null) {
        iter.done().run(Status.OK());
      }
      iter.next();
    }
  }

  @Override
  public void onSnapshotSave(SnapshotWriter writer, Closure done) {
    List<String> copy = entries();
    try {
      Files.write(Path.of(writer.getPath(), SNAPSHOT_FILE), copy, StandardCharsets.UTF_8);
    } catch (IOException e) {
      done.run(new Status(RaftError.EIO, "cannot write snapshot: %s", e));
      return;
    }
    done.run(writer.addFile(SNAPSHOT_FILE) ? Status.OK() : new Status(RaftError.EIO, "addFile failed"));
  }

  @Override
  public boolean onSnapshotLoad(SnapshotReader reader) {
    if (reader.getFileMeta(SNAPSHOT_FILE) == null) {
      return false;
    }
    List<String> loaded;
    try {
      loaded = Files.readAllLines(Path.of(reader.getPath(), SNAPSHOT_FILE), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return false;
    }
    synchronized (this) {
      entries.clear();
      entries.addAll(loaded);
      loadedFromSnapshot = List.copyOf(loaded);
      snapshotLoads++;
    }
    return true;
  }

  synchronized List<String> entries() {
    return List.copyOf(entries);
  }

  synchronized int size() {
    return entries.size();
  }

  synchronized List<String> loadedFromSnapshot() {
    return loadedFromSnapshot;
  }

  synchronized int snapshotLoads() {
    return snapshotLoads;
  }
}
