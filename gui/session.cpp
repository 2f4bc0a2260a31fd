#include "gui/session.hpp"

#include <QSettings>

namespace spplan::gui {

void saveSession(QSettings& settings, const SessionState& state) {
  settings.beginGroup("session");
  settings.setValue("model", state.model);
  settings.setValue("gpu", state.gpu);
  settings.setValue("gpus", state.gpus);
  settings.setValue("gpus_per_node", state.gpusPerNode);
  settings.setValue("seq", state.seq);
  settings.setValue("trainer", state.trainer);
  settings.endGroup();
}

SessionState loadSession(QSettings& settings) {
  SessionState state;
  settings.beginGroup("session");
  state.model = settings.value("model").toString();
  state.gpu = settings.value("gpu").toString();
  state.gpus = settings.value("gpus", 0).toInt();
  state.gpusPerNode = settings.value("gpus_per_node", 0).toInt();
  state.seq = settings.value("seq").toString();
  state.trainer = settings.value("trainer").toString();
  settings.endGroup();
  return state;
}

}  // namespace spplan::gui
