// The saved session: the inputs of the last plan the user looked at (model, GPU, GPU count, GPUs
// per node, sequence, trainer, price, headroom, the optimizer fields, the pinned knobs and the
// stack's choices: attention kernel, encoders; the corpus's lengths file, packing and epochs), kept in QSettings (organization "spplan", application "spplan-gui") and
// restored when spplan-gui starts without input flags. Values are kept as the user typed them and checked again, with the CLI's
// functions, when they are used.
#pragma once

#include <map>

#include <QString>

class QSettings;

namespace spplan::gui {

struct SessionState {
  QString model;
  QString gpu;
  int gpus = 0;         // 0: not saved
  int gpusPerNode = 0;  // 0: not saved
  QString seq;
  QString trainer;
  QString price;     // $ per GPU-hour as typed; empty: the GPU file's
  QString headroom;  // % as typed; empty: 0
  std::map<QString, QString> optimizer;  // optimizer field texts by flag ("lr": "2e-5")
  std::map<QString, QString> pins;       // pinned knobs by flag ("zero": "3"); none: all "any"
  std::map<QString, QString> stack;      // the stack's choices by name ("attention": "sdpa"); none: the trainer's
  std::map<QString, QString> corpus;     // the corpus by flag ("lengths": path, "packing", "epochs"); none: no corpus
};

void saveSession(QSettings& settings, const SessionState& state);
// Fields never saved stay empty / 0.
SessionState loadSession(QSettings& settings);

}  // namespace spplan::gui
